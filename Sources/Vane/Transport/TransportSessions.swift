import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sessions one ``URLSessionTransport`` and its copies use. The ones it made are invalidated
/// when the last copy goes away: a session keeps its delegate, and its connections, until then.
final class TransportSessions: Sendable {
    /// Sends whole-body requests: the transport's own session, or the caller's.
    private let sending: URLSession
    /// Receives event streams; also `sending` unless that is the caller's.
    private let receiving: URLSession
    private let routing = TaskRoutingDelegate()

    /// One session of the transport's own, with this configuration, for everything.
    init(configuration: URLSessionConfiguration) {
        receiving = URLSession(configuration: configuration, delegate: routing, delegateQueue: nil)
        sending = receiving
    }

    /// The caller's session for whole-body requests, and a second one with its configuration to
    /// receive streams (the caller's session reports to the caller's delegate).
    init(caller session: URLSession) {
        sending = session
        receiving = URLSession(configuration: session.configuration, delegate: routing, delegateQueue: nil)
    }

    deinit {
        receiving.finishTasksAndInvalidate()
    }

    /// A task that sends `request` and hands its response to `receiver`; resume it.
    func dataTask(_ request: URLRequest, receiver: BufferedResponseReceiver) -> URLSessionDataTask {
        guard sending !== receiving else { return routedTask(request, receiver: receiver) }
        let task = sending.dataTask(with: request) { data, response, error in
            receiver.receivedWhole(data, response: response, error: error)
        }
        // The task's own delegate decides its redirects; the caller's delegate keeps the rest.
        task.delegate = RedirectRuleDelegate.shared
        return task
    }

    /// A task on the receiving session whose events go to `receiver`; resume it.
    func routedTask(_ request: URLRequest, receiver: any ResponseReceiver) -> URLSessionDataTask {
        let task = receiving.dataTask(with: request)
        routing.route(task, to: receiver)
        return task
    }
}

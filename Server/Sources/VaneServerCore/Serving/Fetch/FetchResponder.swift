package import Foundation
package import HTTPTypes
package import NIOCore
import VaneCore

/// What a client fetch gets: the decision of `POST …/fetch`, free of HTTP.
package enum FetchOutcome: Sendable, Equatable {
    /// 304 with this ETag: the client's values are current.
    case notModified(etag: String)
    /// 200 `{"state":"NO_CHANGE","templateVersion":"N"}` with this ETag: the `etag` the body
    /// named is current (for clients that cannot handle 304).
    case noChange(etag: String, templateVersion: Int64)
    /// 200 `UPDATE`: the response bytes and their ETag.
    case update(etag: String, body: ByteBuffer)
    /// 200 `{"state":"NO_TEMPLATE",…}`, no ETag: nothing is published in the environment.
    case noTemplate
}

/// Decides a client fetch from the request body, its `If-None-Match` tags and the served
/// template, in this order:
///
/// 1. A tag whose proof holds for this body, version and time (``ResultETag``): 304 with that
///    tag, without parsing the body or evaluating anything. That is the common poll.
/// 2. The body is read: `{"context": {...}, "etag"?: "..."}` (a bad body is refused even when
///    nothing is published).
/// 3. Nothing published: `NO_TEMPLATE`.
/// 4. The template is evaluated, and the result's ETag made. A tag of `*` or one naming the same
///    values: 304 with the new ETag. The body's `etag` naming the same values: `NO_CHANGE`.
///    Otherwise `UPDATE`.
package enum FetchResponder {
    /// How many `If-None-Match` tags a fetch examines; later ones are ignored. A client names
    /// one, its previous ETag; a long list would only multiply the work of one request.
    package static let maximumTagsExamined = 8

    /// The outcome of one fetch.
    /// - Throws: ``RequestBodyError`` for a body that is not such an object (a 400).
    /// - Parameter digest: ``Digest128/init(hashing:)`` of `body`, computed once per request
    ///   however many tags name a proof; nil computes it here.
    package static func respond(
        body: [UInt8],
        digest: Digest128? = nil,
        ifNoneMatch tags: some EntityTagSource,
        now: Date,
        served: ServedTemplate?
    ) throws(RequestBodyError) -> FetchOutcome {
        try decide(body: body, digest: digest, tags: tags, now: now, served: served)
    }

    /// The outcome of one fetch with the request's header fields: the same decision, specialized
    /// here for `HTTPFields` (called from the HTTP module, the generic one ran unspecialized,
    /// looking up type metadata and witnesses for every tag of every poll).
    package static func respond(
        body: [UInt8],
        digest: Digest128? = nil,
        ifNoneMatch fields: HTTPFields,
        now: Date,
        served: ServedTemplate?
    ) throws(RequestBodyError) -> FetchOutcome {
        try decide(body: body, digest: digest, tags: fields, now: now, served: served)
    }

    private static func decide(
        body: [UInt8],
        digest: Digest128?,
        tags: some EntityTagSource,
        now: Date,
        served: ServedTemplate?
    ) throws(RequestBodyError) -> FetchOutcome {
        let bodyDigest = digest ?? Digest128(hashing: body)
        if let served {
            let nowMilliseconds = Clock.milliseconds(now)
            var current: String?
            _ = tags.containsTag(amongFirst: maximumTagsExamined) { candidate in
                guard let etag = ResultETag(candidate), etag.proof != nil,
                    etag.isCurrent(scope: served.proofScope, body: bodyDigest, nowMilliseconds: nowMilliseconds)
                else { return false }
                current = etag.headerValue
                return true
            }
            if let current { return .notModified(etag: current) }
        }
        let object = try JSONBody.object(parsing: body)
        let context: EvaluationContext
        do {
            context = try EvaluationContext(
                json: object["context"] ?? .object([:]),
                at: JSONPath.root.appending("context")
            )
        } catch {
            throw RequestBodyError(
                message: "the context is malformed: \(error.issues.count) problem(s)",
                details: error.issues
            )
        }
        let clientETag = try JSONBody.optionalString(object, "etag")
        guard let served else { return .noTemplate }
        let clientContext = served.clientContext(context)
        let result = served.compiled.evaluate(clientContext, at: now)
        let values = served.valuesDigest(of: result)
        let until = served.compiled.resultUnchangedUntil(for: clientContext, evaluatedAt: now)
        let etag = ResultETag(
            values: values,
            scope: served.proofScope,
            until: until == .distantFuture ? nil : Clock.milliseconds(until),
            body: bodyDigest
        )
        .headerValue
        let unchanged: (Substring) -> Bool = { ResultETag($0)?.values == values }
        if tags.containsTag(amongFirst: maximumTagsExamined, where: { $0 == "*" || unchanged($0) }) {
            return .notModified(etag: etag)
        }
        if let clientETag, unchanged(EntityTags.bare(Substring(clientETag))) {
            return .noChange(etag: etag, templateVersion: served.versionNumber)
        }
        return .update(etag: etag, body: served.updateResponse(for: result))
    }
}

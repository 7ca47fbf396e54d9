import ArgumentParser
import Foundation
import VaneCore

/// Where a running server is and how to reach it: `--server`, `--key`, `--project`, `--environment`.
///
/// Each falls back to an environment variable, then to a default: `VANE_SERVER`
/// (`http://127.0.0.1:8080`), `VANE_KEY` (required), `VANE_PROJECT` (`demo`),
/// `VANE_ENVIRONMENT` (`production`). ``RemoteOptions`` adds `--json` for the commands that print
/// the server's replies; `vane flags check` uses these options alone.
struct RemoteConnectionOptions: ParsableArguments {
    static let defaultServer = "http://127.0.0.1:8080"

    @Option(name: .long, help: "The Vane server's URL (env VANE_SERVER; default http://127.0.0.1:8080).")
    var server: String?

    @Option(
        name: .long,
        help: "The API key (env VANE_KEY; prefer the variable, so the key stays out of your shell history)."
    )
    var key: String?

    @Option(name: .long, help: "The project (env VANE_PROJECT; default demo).")
    var project: String?

    @Option(name: .long, help: "The environment (env VANE_ENVIRONMENT; default production).")
    var environment: String?

    static var variables: [String: String] { ProcessInfo.processInfo.environment }

    /// The server URL, checked.
    var serverURL: URL {
        get throws {
            let text = server ?? Self.variables["VANE_SERVER"] ?? Self.defaultServer
            let source = server != nil ? "--server" : (Self.variables["VANE_SERVER"] != nil ? "VANE_SERVER" : "default")
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                ["http", "https"].contains(scheme),
                url.host != nil
            else {
                throw ValidationError(
                    "\(source) \"\(text)\" is not an http:// or https:// URL; for example \(Self.defaultServer)"
                )
            }
            return url
        }
    }

    /// The API key from `--key` or `VANE_KEY`.
    var resolvedKey: String {
        get throws {
            guard let key = key ?? Self.variables["VANE_KEY"], !key.isEmpty else {
                throw ValidationError(
                    "this command needs an API key: set VANE_KEY or pass --key (vane serve prints an admin key on its first start)"
                )
            }
            return key
        }
    }

    /// The project id.
    var resolvedProject: String { project ?? Self.variables["VANE_PROJECT"] ?? "demo" }

    /// The environment id.
    var resolvedEnvironment: String { environment ?? Self.variables["VANE_ENVIRONMENT"] ?? "production" }

    /// The environment these options name.
    var address: EnvironmentAddress { EnvironmentAddress(project: resolvedProject, environment: resolvedEnvironment) }

    /// `project/environment`, for messages.
    var scope: String { address.description }

    /// Checks every option, so a command fails before it sends anything. Called by
    /// ``RemoteOptions/validate()``, and by commands for which a server is optional once they
    /// know it is wanted.
    func check() throws {
        _ = try serverURL
        _ = try resolvedKey
        for (name, value) in [("project", resolvedProject), ("environment", resolvedEnvironment)] where value.isEmpty {
            throw ValidationError("the \(name) must not be empty")
        }
    }

    /// Runs requests, turning their failures into input errors (exit 1).
    func call<T>(_ body: (VaneAdminClient) async throws -> T) async throws -> T {
        let client = VaneAdminClient(server: try serverURL, key: try resolvedKey)
        do {
            return try await body(client)
        } catch let failure as VaneAdminClient.Failure {
            throw InputError(failure.description)
        }
    }
}

/// The options every command that talks to a running server shares: the connection, and `--json`.
struct RemoteOptions: ParsableArguments {
    @OptionGroup var connection: RemoteConnectionOptions

    @Flag(name: .long, help: "Print the server's JSON instead of a human-readable summary.")
    var json = false

    func validate() throws { try connection.check() }

    /// The project id.
    var resolvedProject: String { connection.resolvedProject }

    /// The environment id.
    var resolvedEnvironment: String { connection.resolvedEnvironment }

    /// `project/environment`, for messages.
    var scope: String { connection.scope }

    /// Runs requests, turning their failures into input errors (exit 1).
    func call<T>(_ body: (VaneAdminClient) async throws -> T) async throws -> T {
        try await connection.call(body)
    }
}

/// Output shared by the remote commands.
enum RemoteOutput {
    /// Prints a JSON reply pretty, in the server's member order; raw text when it is not JSON.
    static func printJSON(_ reply: VaneAdminClient.Reply) {
        if let json = try? JSONValue.parse(Array(reply.body)) {
            printJSON(json)
        } else {
            print(String(decoding: reply.body, as: UTF8.self))
        }
    }

    /// Prints JSON pretty, ending in one newline.
    static func printJSON(_ json: JSONValue) {
        let text = json.serialized(.pretty)
        print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
    }

    /// Writes text to a file, or prints it.
    static func write(_ text: String, to path: String?) throws {
        guard let path else {
            print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
            return
        }
        do {
            try Data((text.hasSuffix("\n") ? text : text + "\n").utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            throw InputError("\(path): cannot write: \(error.localizedDescription)")
        }
    }

    /// Columns padded to their widest cell; the last column is not padded.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for row in all {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        return all.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }

    /// A template read from a server reply.
    static func template(_ reply: VaneAdminClient.Reply, server: URL) throws -> ConfigTemplate {
        do {
            return try ConfigTemplate(data: Array(reply.body))
        } catch {
            throw VaneAdminClient.Failure.malformedResponse(
                server: server,
                reason: "the template cannot be read: \(error.description)"
            )
        }
    }
}

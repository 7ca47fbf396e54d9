import Foundation

/// Where Vane keeps its data.
public enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// An embedded SQLite database file: one server node.
    case sqlite(path: String)
    /// A PostgreSQL server, `postgres://user:password@host:port/database`: several server nodes.
    case postgres(url: String)

    /// Reads `--database`: a `postgres://` (or `postgresql://`) URL, or a path to an SQLite file.
    public init(argument: String) {
        if argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://") {
            self = .postgres(url: argument)
        } else {
            self = .sqlite(path: argument)
        }
    }

    /// The location without any password, for logs.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let url):
            guard var components = URLComponents(string: url) else { return "postgres://(unparseable URL)" }
            if components.password != nil { components.password = "****" }
            return components.string ?? "postgres://…"
        }
    }
}

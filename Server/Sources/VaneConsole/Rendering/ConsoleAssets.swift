import Crypto
import Mustache
import NIOCore
import VaneServerCore

/// The console's templates and static files, compiled into the binary (see the ConsoleAssets
/// build plugin) and prepared once at start: templates parsed, static files given
/// content-hashed URLs so browsers can cache them forever.
package struct ConsoleAssets: Sendable {
    /// A static file as served.
    struct StaticFile: Sendable {
        var contentType: String
        var body: ByteBuffer
    }

    /// Every template, by name (`flags` for `templates/flags.mustache`).
    let library: MustacheLibrary
    /// Static files by their hashed name (`console.1a2b3c4d5e.css`).
    let files: [String: StaticFile]
    /// The hashed URL of each static file, by its plain name (`console.css`).
    let urls: [String: String]

    /// The URL path static files are served under.
    static let prefix = "/assets/"

    /// Parses the assets compiled into the binary.
    /// - Throws: A template's parse error (a build with a broken template fails its tests).
    package init() throws {
        try self.init(sources: EmbeddedConsoleAssets.files)
    }

    /// Parses `sources` (paths below `Assets` and their texts).
    init(sources: [String: String] = EmbeddedConsoleAssets.files) throws {
        var library = MustacheLibrary()
        var files: [String: StaticFile] = [:]
        var urls: [String: String] = [:]
        for (path, text) in sources.sorted(by: { $0.key < $1.key }) {
            if path.hasPrefix("templates/"), path.hasSuffix(".mustache") {
                let name = String(path.dropFirst("templates/".count).dropLast(".mustache".count))
                try library.register(text, named: name)
            } else if path.hasPrefix("static/") {
                let name = String(path.dropFirst("static/".count))
                let digest = Array(Array(SHA256.hash(data: Array(text.utf8))).prefix(5))
                let hex = digest.withUnsafeBytes { Hex.encode($0) }
                let dot = name.lastIndex(of: ".") ?? name.endIndex
                let hashed = "\(name[..<dot]).\(hex)\(name[dot...])"
                files[hashed] = StaticFile(contentType: Self.contentType(of: name), body: ByteBuffer(string: text))
                urls[name] = Self.prefix + hashed
            }
        }
        self.library = library
        self.files = files
        self.urls = urls
    }

    static func contentType(of name: String) -> String {
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        if name.hasSuffix(".svg") { return "image/svg+xml" }
        return "text/plain; charset=utf-8"
    }
}

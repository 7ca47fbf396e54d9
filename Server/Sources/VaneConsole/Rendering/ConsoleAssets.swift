import Crypto
import Foundation
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

    /// Every template, by name (`flags` for `templates/flags.mustache`): what partials and
    /// layouts are looked up in.
    let library: MustacheLibrary
    /// Each of the console's templates, parsed; ``init(sources:)`` makes sure none is missing.
    let templates: [ConsoleTemplate: MustacheTemplate]
    /// Static files by their hashed name (`console.1a2b3c4d5e.css`).
    let files: [String: StaticFile]
    /// The hashed URL of each static file, by its plain name (`console.css`).
    let urls: [String: String]

    /// The URL path static files are served under.
    static let prefix = "/assets/"

    /// The assets compiled into the binary, parsed once per process.
    /// - Throws: ``ConsoleAssetsError`` when a template is missing or does not parse, or uses a
    ///   partial or layout that does not exist: the server does not start.
    package init() throws {
        self = try Self.embedded.get()
    }

    /// The embedded assets cannot change while the process runs, so every server it starts
    /// shares one parse (a test process starts hundreds; parsing every template was most of a
    /// test server's start).
    private static let embedded = Result { () throws(ConsoleAssetsError) in
        try ConsoleAssets(sources: EmbeddedConsoleAssets.files)
    }

    /// Parses `sources` (paths below `Assets` and their texts).
    init(sources: [String: String] = EmbeddedConsoleAssets.files) throws(ConsoleAssetsError) {
        var library = MustacheLibrary()
        var files: [String: StaticFile] = [:]
        var urls: [String: String] = [:]
        for (path, text) in sources.sorted(by: { $0.key < $1.key }) {
            if path.hasPrefix("templates/"), path.hasSuffix(".mustache") {
                let name = String(path.dropFirst("templates/".count).dropLast(".mustache".count))
                do {
                    library.register(try MustacheTemplate(string: text), named: name)
                } catch {
                    throw .unparsable(path, error)
                }
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
        var templates: [ConsoleTemplate: MustacheTemplate] = [:]
        for template in ConsoleTemplate.allCases {
            guard let parsed = library.getTemplate(named: template.rawValue) else { throw .missing(template) }
            templates[template] = parsed
        }
        // swift-mustache renders a partial or layout it cannot find as nothing.
        for (path, text) in sources where path.hasPrefix("templates/") {
            for name in Self.includedTemplates(in: text) where library.getTemplate(named: name) == nil {
                throw .unknownPartial(name, in: path)
            }
        }
        self.library = library
        self.templates = templates
        self.files = files
        self.urls = urls
    }

    /// The names of the templates a template includes (`{{> name}}`) or extends (`{{< name}}`).
    static func includedTemplates(in text: String) -> [String] {
        var names: [String] = []
        var rest = text[...]
        while let open = rest.range(of: "{{") {
            rest = rest[open.upperBound...]
            guard let kind = rest.first, kind == ">" || kind == "<", let close = rest.range(of: "}}") else { continue }
            let name = rest[rest.index(after: rest.startIndex)..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            names.append(name)
            rest = rest[close.upperBound...]
        }
        return names
    }

    static func contentType(of name: String) -> String {
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        if name.hasSuffix(".svg") { return "image/svg+xml" }
        return "text/plain; charset=utf-8"
    }
}

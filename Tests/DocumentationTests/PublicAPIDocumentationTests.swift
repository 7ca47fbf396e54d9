import Foundation
import Testing

// Every public function, initializer and subscript of the modules apps and services import
// documents each of its parameters, what it returns and what it throws. DocC warns only about a
// documented parameter that does not exist, not about one left out, so scripts/check-docs cannot
// catch a missing `- Parameters` entry; this test reads the declarations in the sources instead.
@Suite struct PublicAPIDocumentationTests {
    /// The modules whose public API users call (VaneCore's wider API is the server's and the tools').
    static let modules = ["Vane", "VaneTesting", "VaneService", "VaneConfiguration"]

    @Test func everyPublicFunctionDocumentsItsParametersResultAndErrors() throws {
        let sources = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        var declarations: [PublicDeclaration] = []
        for module in Self.modules {
            let folder = sources.appendingPathComponent(module)
            let files = try #require(
                FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil),
                "no folder \(folder.path)"
            )
            for case let file as URL in files where file.pathExtension == "swift" {
                // The placeholders a build without the ServerSDK trait gets: unavailable, only
                // there to say how to turn the trait on.
                guard file.lastPathComponent != "ServerSDKTraitMissing.swift" else { continue }
                let text = try String(contentsOf: file, encoding: .utf8)
                declarations += PublicDeclaration.all(in: text, file: "\(module)/\(file.lastPathComponent)")
            }
        }
        #expect(declarations.count > 100, "the scan found too few declarations: is the path right?")
        let problems = declarations.flatMap { declaration in
            declaration.missing.map { "\(declaration.location): \(declaration.name): \($0)" }
        }
        #expect(
            problems.isEmpty,
            """
            \(problems.count) gaps in the public API's documentation comments; add them in the \
            declaration's `///` comment (`- Parameters:` with `- name: …` for each, `- Returns:`, `- Throws:`):
            \(problems.sorted().joined(separator: "\n"))
            """
        )
    }

    // The scan itself: a declaration missing each kind of entry is reported, a complete one is not.
    @Test func reportsWhatADeclarationLeavesOut() {
        let text = """
            /// Reads a value.
            /// - Parameter key: The key.
            public func read(forKey key: String, default value: Int) throws -> Int { 0 }

            /// Complete.
            /// - Parameters:
            ///   - key: The key.
            ///   - handler: Called with each value.
            /// - Returns: The value.
            /// - Throws: ``ReadError`` when the key is missing.
            @discardableResult
            public func complete(_ key: String, handler: @escaping (Int, Int) -> Void) throws -> Int { 0 }

            public protocol Reader {
                /// Undocumented parameter.
                func value(forKey key: String) -> String?
            }

            /// Creates nothing.
            public init() {}
            """
        let declarations = PublicDeclaration.all(in: text, file: "Example.swift")
        #expect(declarations.map(\.name) == ["read", "complete", "value", "init"])
        #expect(declarations[0].missing == ["parameter value", "- Returns:", "- Throws:"])
        #expect(declarations[1].missing.isEmpty)
        #expect(declarations[2].missing == ["parameter key", "- Returns:"])
        #expect(declarations[3].missing.isEmpty)
    }
}

/// A public function, initializer or subscript read from a source file, with its doc comment.
struct PublicDeclaration {
    var location: String
    var name: String
    /// The names a doc comment documents: each parameter's internal name.
    var parameters: [String]
    var returnsValue: Bool
    var throwsErrors: Bool
    var documentation: String

    /// What the doc comment leaves out.
    var missing: [String] {
        var missing: [String] = []
        for parameter in parameters where !documents(parameter) {
            missing.append("parameter \(parameter)")
        }
        if returnsValue && !documentation.contains("- Returns:") { missing.append("- Returns:") }
        if throwsErrors && !documentation.contains("- Throws:") { missing.append("- Throws:") }
        return missing
    }

    private func documents(_ parameter: String) -> Bool {
        documentation.split(separator: "\n").contains { line in
            let text = line.trimmingCharacters(in: .whitespaces)
            return text.hasPrefix("- \(parameter):") || text.hasPrefix("- Parameter \(parameter):")
        }
    }

    /// The public declarations in a file: `public`/`open` ones, and the requirements of a public
    /// protocol (which need no modifier).
    static func all(in text: String, file: String) -> [PublicDeclaration] {
        let lines = text.components(separatedBy: "\n")
        var declarations: [PublicDeclaration] = []
        var protocolDepth: Int?  // the brace depth inside a public protocol's body
        var depth = 0
        for (index, line) in lines.enumerated() {
            let code = line.trimmingCharacters(in: .whitespaces)
            if !code.hasPrefix("//") {
                if protocolDepth == nil, code.range(of: #"(^|\s)public protocol "#, options: .regularExpression) != nil
                {
                    protocolDepth = depth + 1
                }
                let inProtocol = protocolDepth == depth
                if let kind = kind(of: code, inProtocol: inProtocol) {
                    declarations.append(
                        declaration(kind, at: index, in: lines, location: "\(file):\(index + 1)")
                    )
                }
                depth += code.filter { $0 == "{" }.count - code.filter { $0 == "}" }.count
                if let inside = protocolDepth, depth < inside { protocolDepth = nil }
            }
        }
        return declarations
    }

    private static let modifiers: Set<String> = [
        "public", "open", "static", "class", "final", "nonisolated", "mutating", "convenience", "override",
        "required", "borrowing", "consuming",
    ]

    /// `func`, `init` or `subscript` when the line declares a public one.
    private static func kind(of code: String, inProtocol: Bool) -> String? {
        var words = code.split(separator: " ").map(String.init)
        while let first = words.first, first.hasPrefix("@") { words.removeFirst() }  // attributes
        var isPublic = inProtocol
        while let first = words.first, modifiers.contains(first) {
            if first == "public" || first == "open" { isPublic = true }
            words.removeFirst()
        }
        guard isPublic, let keyword = words.first else { return nil }
        if keyword == "func" { return "func" }
        if keyword.hasPrefix("init(") || keyword.hasPrefix("init<") || keyword.hasPrefix("init?(") { return "init" }
        if keyword.hasPrefix("subscript") { return "subscript" }
        return nil
    }

    private static func declaration(
        _ kind: String,
        at index: Int,
        in lines: [String],
        location: String
    )
        -> PublicDeclaration
    {
        // The signature: from the declaration's line until its body opens or its parameter list
        // has closed and a line ends it.
        var signature = ""
        var line = index
        while line < lines.count {
            let code = lines[line].trimmingCharacters(in: .whitespaces)
            signature += (signature.isEmpty ? "" : " ") + code
            if code.contains("{")
                || (parenthesesClosed(signature) && line + 1 < lines.count && !continues(lines[line + 1]))
            {
                break
            }
            line += 1
        }
        let (parameterList, rest) = splitParameters(signature)
        let parameters = topLevelParts(parameterList).compactMap(documentedName)
        let afterParameters = rest.components(separatedBy: "{").first ?? rest
        let result = afterParameters.components(separatedBy: "->").dropFirst().first?
            .components(separatedBy: " where ").first?.trimmingCharacters(in: .whitespaces)
        let returnsValue = kind == "func" && result.map { !["Void", "()", ""].contains($0) } == true
        let throwsErrors = afterParameters.components(separatedBy: "->").first?.contains("throws") == true
        var comment: [String] = []
        var above = index - 1
        while above >= 0 {
            let code = lines[above].trimmingCharacters(in: .whitespaces)
            if code.hasPrefix("///") {
                comment.insert(String(code.dropFirst(3)), at: 0)
            } else if !code.hasPrefix("@") {
                break
            }
            above -= 1
        }
        let name = kind == "func" ? functionName(signature) : kind
        return PublicDeclaration(
            location: location,
            name: name,
            parameters: parameters,
            returnsValue: returnsValue,
            throwsErrors: throwsErrors,
            documentation: comment.joined(separator: "\n")
        )
    }

    private static func continues(_ next: String) -> Bool {
        let code = next.trimmingCharacters(in: .whitespaces)
        return code.hasPrefix("->") || code.hasPrefix("throws") || code.hasPrefix("async") || code.hasPrefix("where")
            || code.hasPrefix("{") || code.hasPrefix("rethrows")
    }

    private static func parenthesesClosed(_ text: String) -> Bool {
        text.contains("(") && text.filter { $0 == "(" }.count == text.filter { $0 == ")" }.count
    }

    private static func functionName(_ signature: String) -> String {
        guard let range = signature.range(of: "func ") else { return "func" }
        return String(signature[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
    }

    /// The text inside the first parenthesized list (after any generic parameters), and what follows it.
    private static func splitParameters(_ signature: String) -> (String, String) {
        var angle = 0
        var start: String.Index?
        var depth = 0
        for index in signature.indices {
            let character = signature[index]
            if start == nil {
                if character == "<" { angle += 1 } else if character == ">" { angle -= 1 }
                if character == "(" && angle == 0 {
                    start = signature.index(after: index)
                    depth = 1
                }
                continue
            }
            if character == "(" { depth += 1 }
            if character == ")" {
                depth -= 1
                if depth == 0, let start {
                    return (String(signature[start..<index]), String(signature[signature.index(after: index)...]))
                }
            }
        }
        return ("", "")
    }

    /// The list's parts separated by top-level commas.
    private static func topLevelParts(_ list: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        for character in list {
            if "([<".contains(character) { depth += 1 }
            if ")]".contains(character) || (character == ">" && current.last != "-") { depth -= 1 }
            if character == "," && depth == 0 {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.trimmingCharacters(in: .whitespaces).isEmpty { parts.append(current) }
        return parts
    }

    /// The name a parameter is documented by: its internal name (`forKey key` is `key`).
    private static func documentedName(_ parameter: String) -> String? {
        guard let colon = parameter.firstIndex(of: ":") else { return nil }
        let names = parameter[..<colon].split(separator: " ").map(String.init)
        guard let name = names.last, name != "_" else { return nil }
        return name
    }
}

/// Console assets the server cannot start with: found while the templates are prepared at
/// start, so a broken build never serves a page that renders blank.
struct ConsoleAssetsError: Error, CustomStringConvertible {
    let description: String

    /// A template a page renders is not among the compiled assets.
    static func missing(_ template: ConsoleTemplate) -> ConsoleAssetsError {
        ConsoleAssetsError(
            description:
                "the console template templates/\(template.rawValue).mustache is missing from the build; restore it under Server/Sources/VaneConsole/Assets and build again"
        )
    }

    /// A template does not parse.
    static func unparsable(_ path: String, _ error: any Error) -> ConsoleAssetsError {
        ConsoleAssetsError(
            description: "the console template \(path) cannot be parsed (\(error)); fix it and build again"
        )
    }

    /// A template includes (`{{> name}}`) or extends (`{{< name}}`) one that does not exist.
    static func unknownPartial(_ name: String, in path: String) -> ConsoleAssetsError {
        ConsoleAssetsError(
            description:
                "the console template \(path) uses the template \"\(name)\", which does not exist; add it or fix the name"
        )
    }
}

import ArgumentParser
import Foundation
import VaneCore

/// `vane experiments results KEY`: the health checks, then one table per metric.
struct ExperimentsResultsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "results",
        abstract: "Print an experiment's health checks and results, one table per metric.",
        discussion: """
            The method the experiment was created with decides the columns: sequential (the default) \
            shows always-valid p-values and intervals, safe to read every day; bayesian shows the \
            chance to beat control and the expected loss. --json prints every reading.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The experiment's key.")
    var key: String

    func run() async throws {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.experimentResource(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                key: key,
                resource: "results"
            )
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        print(ExperimentResultsReport.text(json.objectValue ?? JSONObject()), terminator: "")
    }
}

/// `vane experiments export KEY`: the raw events as NDJSON.
struct ExperimentsExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write an experiment's raw exposures and metric events as NDJSON, in the order received.",
        discussion: """
            One JSON object per line, as the SDK sent it plus receiveTime: load it into a notebook \
            or a warehouse to analyse it another way. Events come in the order the server received \
            them, so events apps sent late come last. Raw events received longer ago than the \
            server's --event-retention-days are gone; the results keep counting them.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The experiment's key.")
    var key: String

    @Option(name: .long, help: "Only events at or after this time (RFC 3339, e.g. 2026-11-01T00:00:00Z).")
    var since: String?

    @Option(name: .long, help: "Only events before this time (RFC 3339).")
    var until: String?

    @Option(name: [.short, .long], help: "Write to this file instead of standard output.")
    var output: String?

    func validate() throws {
        for (name, value) in [("--since", since), ("--until", until)] {
            if let value, ISO8601Timestamp.milliseconds(from: value[...], strict: true) == nil {
                throw ValidationError("\(name) must be an RFC 3339 time such as 2026-11-01T00:00:00Z, not \"\(value)\"")
            }
        }
    }

    func run() async throws {
        var query: [URLQueryItem] = []
        if let since { query.append(URLQueryItem(name: "since", value: since)) }
        if let until { query.append(URLQueryItem(name: "until", value: until)) }
        let reply = try await remote.call { client in
            try await client.experimentResource(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                key: key,
                resource: "events",
                query: query
            )
        }
        let text = String(decoding: reply.body, as: UTF8.self)
        if text.isEmpty, output == nil { return }
        try RemoteOutput.write(text, to: output)
    }
}

/// The results document as text: health first, then a table per metric and measure.
enum ExperimentResultsReport {
    static func text(_ results: JSONObject) -> String {
        var lines: [String] = []
        let key = results["experiment"]?.stringValue ?? "?"
        let status = results["status"]?.stringValue ?? "?"
        let method = results["method"]?.stringValue ?? "sequential"
        let level = levelText(number(results["confidenceLevel"]) ?? 0.95)
        var title = "Experiment \(key): \(status), \(method), \(level) confidence"
        if let start = results["startTime"]?.stringValue { title += ", started \(start)" }
        if let stop = results["stopTime"]?.stringValue { title += ", stopped \(stop)" }
        lines.append(title)

        let health = results["health"]?.objectValue ?? JSONObject()
        var checks: [String] = []
        if let mismatch = health["sampleRatioMismatch"]?.objectValue {
            let p = number(mismatch["pValue"]).map(pValue) ?? "?"
            let stated = p.hasPrefix("<") ? "p \(p)" : "p = \(p)"
            checks.append(
                mismatch["flagged"]?.boolValue == true
                    ? "SAMPLE-RATIO MISMATCH (\(stated))" : "split as configured (\(stated))"
            )
        }
        let several = health["unitsInSeveralVariants"]?.numberValue?.intValue ?? 0
        checks.append("\(several) unit(s) in several variants")
        lines.append("Health: " + checks.joined(separator: "; "))
        for warning in health["warnings"]?.arrayValue ?? [] {
            lines.append("  ! " + (warning.stringValue ?? ""))
        }
        if let notice = results["notice"]?.stringValue { lines.append("  " + notice) }
        lines.append("")

        let variants = (results["variants"]?.arrayValue ?? []).compactMap(\.objectValue)
        lines.append(
            RemoteOutput.table(
                ["VARIANT", "WEIGHT", "EXPOSED UNITS"],
                variants.map {
                    [
                        $0["name"]?.stringValue ?? "?", $0["weight"]?.numberValue?.description ?? "?",
                        $0["exposedUnits"]?.numberValue?.description ?? "0",
                    ]
                }
            )
        )
        for metric in (results["metrics"]?.arrayValue ?? []).compactMap(\.objectValue) {
            let name = metric["name"]?.stringValue ?? "?"
            let role = metric["role"]?.stringValue ?? "?"
            for measure in (metric["measures"]?.arrayValue ?? []).compactMap(\.objectValue) {
                lines.append("")
                let kind = measure["measure"]?.stringValue ?? "?"
                lines.append("\(name) (\(role)): \(label(kind))")
                lines.append(table(measure, kind: kind, method: method, level: level))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func label(_ measure: String) -> String {
        switch measure {
        case "conversionRate": "share of units that converted"
        case "meanPerUnit": "mean value per unit"
        case "ratio": "ratio of sums"
        default: measure
        }
    }

    /// "95%", "99.5%".
    private static func levelText(_ level: Double) -> String {
        let percent = (level * 1_000).rounded() / 10
        return percent == percent.rounded() ? "\(Int(percent))%" : "\(percent)%"
    }

    private static func table(_ measure: JSONObject, kind: String, method: String, level: String) -> String {
        let isRate = kind == "conversionRate"
        let comparisons = Dictionary(
            (measure["comparisons"]?.arrayValue ?? []).compactMap(\.objectValue).map {
                ($0["variant"]?.stringValue ?? "", $0)
            },
            uniquingKeysWith: { first, _ in first }
        )
        let header =
            method == "bayesian"
            ? [
                "VARIANT", "UNITS", "VALUE", "\(level) INTERVAL", "DIFFERENCE", "CHANCE TO BEAT CONTROL",
                "EXPECTED LOSS",
            ]
            : [
                "VARIANT", "UNITS", "VALUE", "\(level) INTERVAL", "DIFFERENCE", "\(level) ALWAYS-VALID INTERVAL",
                "RELATIVE", "P-VALUE",
            ]
        let format: (Double) -> String = { isRate ? percent($0) : figure($0) }
        let formatDifference: (Double) -> String = { isRate ? signed(points: $0) : signed($0) }
        let rows = (measure["variants"]?.arrayValue ?? []).compactMap(\.objectValue).map { variant -> [String] in
            let name = variant["variant"]?.stringValue ?? "?"
            var units = variant["exposedUnits"]?.numberValue?.description ?? "0"
            if let converted = variant["convertedUnits"]?.numberValue, isRate { units = "\(converted)/\(units)" }
            let value = number(variant["estimate"]?.objectValue?["value"]).map(format)
            let own = variant["interval"]?.objectValue
            let ownText = own.map { interval($0, format) } ?? "-"
            var row = [name, units, value ?? "-", ownText]
            guard let comparison = comparisons[name] else {
                return row + ["control"] + Array(repeating: "", count: header.count - row.count - 1)
            }
            let difference = number(comparison["difference"]?.objectValue?["value"])
            let relative = number(comparison["relativeDifference"]?.objectValue?["value"])
            var differenceText = difference.map { isRate ? signed(points: $0) : signed($0) } ?? "-"
            if let relative { differenceText += " (\(signed(percent: relative)))" }
            row.append(differenceText)
            if method == "bayesian" {
                let bayesian = comparison["bayesian"]?.objectValue
                row.append(number(bayesian?["chanceToBeatControl"]).map(percent) ?? "-")
                row.append(number(bayesian?["expectedLossOfTreatment"]).map { isRate ? points($0) : figure($0) } ?? "-")
            } else {
                let sequential = comparison["alwaysValid"]?.objectValue
                row.append(sequential?["interval"]?.objectValue.map { interval($0, formatDifference) } ?? "-")
                row.append(
                    sequential?["relativeInterval"]?.objectValue.map { interval($0) { signed(percent: $0) } } ?? "-"
                )
                row.append(number(sequential?["pValue"]).map(pValue) ?? "-")
            }
            return row
        }
        return RemoteOutput.table(header, rows)
    }

    private static func number(_ value: JSONValue?) -> Double? { value?.numberValue?.value }

    /// `[lower, upper]`; a null end is unbounded.
    private static func interval(_ bounds: JSONObject, _ format: (Double) -> String) -> String {
        let lower = number(bounds["lower"]).map(format) ?? "-∞"
        let upper = number(bounds["upper"]).map(format) ?? "+∞"
        return "[\(lower), \(upper)]"
    }

    private static func percent(_ value: Double) -> String { String(format: "%.2f%%", value * 100) }
    private static func points(_ value: Double) -> String { String(format: "%.2f pp", value * 100) }
    private static func signed(points value: Double) -> String { String(format: "%+.2f pp", value * 100) }
    private static func signed(percent value: Double) -> String { String(format: "%+.1f%%", value * 100) }
    private static func signed(_ value: Double) -> String { String(format: "%+.4g", value) }
    private static func figure(_ value: Double) -> String { String(format: "%.4g", value) }
    private static func pValue(_ value: Double) -> String {
        value < 0.0001 ? "< 0.0001" : String(format: "%.4f", value)
    }
}

import Foundation
import Hummingbird
import VaneServerCore

/// The audit log, filtered by person or key, environment, action and dates.
extension HistoryController {
    struct AuditPage: Sendable {
        typealias Option = SelectOption

        struct Row: Sendable {
            var time: String
            var timeISO: String
            var actor: String
            var actorDetail: String?
            var action: String
            var `where`: String
            var summary: String
        }

        var actor: String
        var environments: [Option]
        var actions: [Option]
        var since: String
        var until: String
        var entries: [Row]
        var nextHref: String?
        var error: String?
    }

    /// Every action the audit log records.
    static let auditActions = AuditAction.allCases.map(\.rawValue)

    @Sendable func audit(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, _) = try context.signedIn()
        let parameters = ConsoleForm.query(request)
        func value(_ name: String) -> String {
            (parameters[name] ?? "").trimmingCharacters(in: .whitespaces)
        }
        var filter = AuditFilter()
        var error: String?
        if !value("actor").isEmpty { filter.actor = String(value("actor").prefix(254)) }
        if Self.auditActions.contains(value("action")) { filter.action = value("action") }
        if !value("since").isEmpty {
            if let time = Self.dayStart(value("since")) {
                filter.startTime = time
            } else {
                error = "“From” is not a date (YYYY-MM-DD)"
            }
        }
        if !value("until").isEmpty {
            // Until a day means through its end.
            if let time = Self.dayStart(value("until")) {
                filter.endTime = time + 86_400_000
            } else {
                error = "“Until” is not a date (YYYY-MM-DD)"
            }
        }
        var scope: EnvironmentKey?
        let environmentText = value("environment")
        if let slash = environmentText.firstIndex(of: "/") {
            scope = EnvironmentKey(
                projectId: String(environmentText[..<slash]),
                environmentId: String(environmentText[environmentText.index(after: slash)...])
            )
        }
        let options = try await environmentNames().map {
            AuditPage.Option(value: $0, label: $0, selected: $0 == environmentText)
        }
        let token = parameters["page"]
        let page: Page<AuditEntry>
        do {
            page = try await store.audit(
                projectId: scope?.projectId,
                environmentId: scope?.environmentId,
                filter: filter,
                pageSize: 100,
                pageToken: token
            )
        } catch StorageError.invalidPageToken {
            throw ConsolePageError.badRequest("that page of the audit log does not exist; start from the first page")
        }
        let rows = page.items.map { entry in
            AuditPage.Row(
                time: Self.displayTime(entry.time),
                timeISO: Clock.rfc3339(milliseconds: entry.time),
                actor: entry.actor.name,
                actorDetail: entry.actor.keyId ?? entry.actor.userId,
                action: entry.action,
                where: [entry.projectId, entry.environmentId].compactMap { $0 }.joined(separator: "/"),
                summary: entry.summary
            )
        }
        var next: String?
        if let nextToken = page.nextPageToken {
            var items = ["actor", "environment", "action", "since", "until"].compactMap { name -> String? in
                let text = value(name)
                return text.isEmpty ? nil : "\(name)=\(ConsolePaths.encodeQueryValue(text))"
            }
            items.append("page=\(ConsolePaths.encodeQueryValue(nextToken))")
            next = "/audit?" + items.joined(separator: "&")
        }
        return renderer.render(
            .audit,
            chrome: chrome("Audit log", user: user, section: "/audit"),
            page: AuditPage(
                actor: value("actor"),
                environments: options,
                actions: Self.auditActions.map {
                    AuditPage.Option(value: $0, label: $0, selected: $0 == value("action"))
                },
                since: value("since"),
                until: value("until"),
                entries: rows,
                nextHref: next,
                error: error
            ),
            context: context
        )
    }

    /// Midnight UTC of `YYYY-MM-DD`, in milliseconds.
    static func dayStart(_ text: String) -> Int64? {
        guard text.count == 10 else { return nil }
        return Clock.milliseconds(rfc3339: text + "T00:00:00Z")
    }
}

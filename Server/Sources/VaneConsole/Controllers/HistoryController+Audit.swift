import Foundation
import Hummingbird
import VaneCore
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
            var kind: String
            var `where`: String
            var summary: String
            var message: String?
            var flags: [FlagLink]
            var diffHref: String?
        }

        /// A flag key the entry changed, linked to its editor in the entry's environment.
        struct FlagLink: Sendable {
            var key: String
            var href: String?
        }

        var actor: String
        var flag: String
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
        if !value("flag").isEmpty { filter.flag = String(value("flag").prefix(256)) }
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
            let environment = entry.projectId.flatMap { project in
                entry.environmentId.map { EnvironmentKey(projectId: project, environmentId: $0) }
            }
            return AuditPage.Row(
                time: Self.displayTime(entry.time),
                timeISO: Clock.rfc3339(milliseconds: entry.time),
                actor: entry.actor.name,
                actorDetail: entry.actor.keyId ?? entry.actor.userId,
                action: entry.action,
                kind: entry.kind.label,
                where: [entry.projectId, entry.environmentId].compactMap { $0 }.joined(separator: "/"),
                summary: entry.summary,
                message: entry.message,
                flags: entry.flags.map { key in
                    AuditPage.FlagLink(key: key, href: environment.map { ConsolePaths.flagEditor($0, key: key) })
                },
                diffHref: environment.flatMap { Self.diffHref(entry, in: $0) }
            )
        }
        var next: String?
        if let nextToken = page.nextPageToken {
            var items = ["actor", "flag", "environment", "action", "since", "until"].compactMap { name -> String? in
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
                flag: value("flag"),
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

    /// The diff a publish or rollback entry made: its version against the one before.
    static func diffHref(_ entry: AuditEntry, in environment: EnvironmentKey) -> String? {
        guard
            entry.action == AuditAction.templatePublish.rawValue
                || entry.action == AuditAction.templateRollback.rawValue,
            case .object(let details) = entry.details,
            let number = details["versionNumber"]?.stringValue.flatMap({ Int64($0) }), number >= 1
        else { return nil }
        return ConsolePaths.environment(environment) + "/diff?from=\(number - 1)&to=\(number)"
    }

    /// Midnight UTC of `YYYY-MM-DD`, in milliseconds.
    static func dayStart(_ text: String) -> Int64? {
        guard text.count == 10 else { return nil }
        return Clock.milliseconds(rfc3339: text + "T00:00:00Z")
    }
}

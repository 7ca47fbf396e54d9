import Foundation
import Hummingbird
import VaneAuthoring
import VaneCore
import VaneServerCore

/// Copying a flag (its values and the conditions they need) from one environment into the
/// person's draft of another, with the same diff and impact sample as a publish's review, by
/// the rule the API's `POST …/flags/{key}/copy` uses (``FlagCopying``).
///
/// The source's flag page links to a chooser (`…/{source}/flags/{key}/copy`); the preview and
/// the copy itself live under the target (`…/{target}/copy?from=…&flag=…`), so the target's
/// editor group admits only people who may publish there.
extension FlagsController {
    /// Registers the copy's routes, each in the group of the role it needs.
    func registerCopy(on routes: ConsoleRouteGroups) {
        routes.environment.get("flags/:key/copy", use: chooseTarget)
        routes.environmentEditor.get("copy", use: preview)
        routes.environmentEditor.post("copy", use: copyIntoDraft)
    }

    /// The page's data for `copy.mustache`: the chooser, or the preview of one copy.
    struct CopyPage: Sendable {
        typealias SampleRow = ReviewSample.Row

        var flag: String
        var from: String
        var sourceName: String
        var targetName: String = ""
        var choosing: Bool = false
        var chooseAction: String = ""
        var targets: [SelectOption] = []
        var hasTargets: Bool = false
        var refusal: String?
        var previewing: Bool = false
        var addedConditions: String?
        var replaced: Bool = false
        var diff: DiffView?
        var sampleRows: [SampleRow] = []
        var hasSample: Bool = false
        var sampleNote: String?
        var copyAction: String = ""
        var csrf: String
        var back: String
    }

    /// The chooser: the other environments of the project the person may publish in.
    @Sendable func chooseTarget(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let flag = context.parameters.get("key") ?? ""
        if let target = request.uri.queryParameters.get("to").map({ String($0) }), !target.isEmpty {
            throw ConsoleRedirect(location: Self.previewLocation(source: key, target: target, flag: flag))
        }
        guard try await liveVersion(key).template.parameter(forKey: flag) != nil else {
            throw ConsolePageError.notFound(
                "version \(environment.templateVersion) has no flag \"\(flag.prefix(100))\""
            )
        }
        let targets = try await otherEnvironments(of: key, principal: principal).enumerated().map {
            SelectOption(value: $0.element.id, label: $0.element.name, selected: $0.offset == 0)
        }
        let page = CopyPage(
            flag: flag,
            from: key.environmentId,
            sourceName: environment.name,
            choosing: true,
            chooseAction: ConsolePaths.environment(key) + "/flags/" + ConsolePaths.encode(flag) + "/copy",
            targets: targets,
            hasTargets: !targets.isEmpty,
            csrf: session.csrfToken,
            back: ConsolePaths.environment(key) + "/flags"
        )
        return renderer.render(
            .copy,
            chrome: try await environmentChrome(
                title: "Copy \(flag)",
                user: user,
                project: project,
                environment: environment,
                tab: "flags"
            ),
            page: page,
            context: context
        )
    }

    /// What copying would change in the person's draft of this (the target) environment.
    @Sendable func preview(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        let (target, project, environment) = try await self.environment(context)
        let (source, flag) = try await Self.sourceAndFlag(ConsoleForm.query(request), target: target, store: store)
        let copy = try await workingCopy(target, user: user)
        let sourceLive = try await liveVersion(source.key).template
        var page = CopyPage(
            flag: flag,
            from: source.key.environmentId,
            sourceName: source.name,
            targetName: environment.name,
            copyAction: ConsolePaths.environment(target) + "/copy",
            csrf: session.csrfToken,
            back: ConsolePaths.environment(source.key) + "/flags"
        )
        let saved = try await drafts.savedContexts(projectId: target.projectId)
        do {
            let result = try FlagCopying.copy(flag, from: sourceLive, into: copy.template)
            let diff = TemplateDiff(from: copy.template, to: result.template)
            let sample = ReviewSample.estimate(
                live: copy.live,
                proposed: result.template,
                diff: TemplateDiff(from: copy.live, to: result.template),
                savedContexts: saved,
                at: Date(),
                flagsBase: ConsolePaths.environment(target) + "/flags"
            )
            page.previewing = true
            page.replaced = result.replaced
            page.addedConditions = result.addedConditions.isEmpty ? nil : result.addedConditions.joined(separator: ", ")
            page.diff = DiffView(from: copy.template, to: result.template, diff: diff)
            page.sampleRows = sample.rows
            page.hasSample = !sample.rows.isEmpty
            page.sampleNote = sample.note
        } catch {
            page.refusal = error.description
        }
        return renderer.render(
            .copy,
            chrome: try await environmentChrome(
                title: "Copy \(flag) from \(source.name)",
                user: user,
                project: project,
                environment: environment,
                tab: "flags"
            ),
            page: page,
            context: context,
            status: page.refusal == nil ? .ok : .conflict
        )
    }

    /// Copies the flag into the person's draft of this environment and opens its review.
    @Sendable func copyIntoDraft(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, _) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let (target, _, _) = try await self.environment(context)
        let (source, flag) = try await Self.sourceAndFlag(form.fields, target: target, store: store)
        let copy = try await workingCopy(target, user: user)
        let sourceLive = try await liveVersion(source.key).template
        let result: FlagCopying.Copy
        do {
            result = try FlagCopying.copy(flag, from: sourceLive, into: copy.template)
        } catch {
            throw ConsolePageError.badRequest(error.description)
        }
        try await saveDraft(target, user: user, template: result.template, copy: copy)
        throw ConsoleRedirect(location: ConsolePaths.environment(target) + "/review")
    }

    /// The source environment (`from`) and the flag key (`flag`) a preview or copy names.
    static func sourceAndFlag(
        _ fields: [String: String],
        target: EnvironmentKey,
        store: ConfigStore
    ) async throws -> (source: (key: EnvironmentKey, name: String), flag: String) {
        let from = fields["from"] ?? ""
        let flag = fields["flag"] ?? ""
        guard !flag.isEmpty else { throw ConsolePageError.badRequest("say which flag to copy (flag=…)") }
        guard from != target.environmentId else {
            throw ConsolePageError.badRequest(FlagCopyRefusal.sameEnvironment.description)
        }
        guard let environment = try await store.environment(projectId: target.projectId, id: from) else {
            throw ConsolePageError.notFound(
                "project \"\(target.projectId)\" has no environment \"\(from.prefix(100))\" to copy from"
            )
        }
        return ((EnvironmentKey(projectId: target.projectId, environmentId: from), environment.name), flag)
    }

    /// `…/{target}/copy?from=…&flag=…`.
    static func previewLocation(source: EnvironmentKey, target: String, flag: String) -> String {
        ConsolePaths.environment(EnvironmentKey(projectId: source.projectId, environmentId: target))
            + "/copy?from=" + ConsolePaths.encodeQueryValue(source.environmentId) + "&flag="
            + ConsolePaths.encodeQueryValue(flag)
    }
}

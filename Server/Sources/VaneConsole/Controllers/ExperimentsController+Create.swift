import Hummingbird
import VaneCore
import VaneServerCore

/// The form that creates an experiment: it builds the definition `POST …/experiments` takes and
/// creates it through the same ``ExperimentLifecycle/create(_:in:actor:)``, so its problems read
/// as the API's, each with its JSON path.
extension ExperimentsController {
    @Sendable func newExperimentPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await renderForm(context: context, fields: [:], problems: [])
    }

    @Sendable func createExperiment(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        let live = try await store.liveTemplate(key)
        let definition = ExperimentForm.definition(form, template: live.template)
        do {
            let created = try await experimentLifecycle.create(definition, in: key, actor: principal.actor)
            throw ConsoleRedirect(
                location: ConsolePaths.environment(key) + "/experiments/" + ConsolePaths.encode(created.key)
                    + "?done=created"
            )
        } catch let refusal as ExperimentDefinitionRefusal {
            return try await renderForm(context: context, fields: form.fields, problems: refusal.issues)
        } catch StorageError.experimentExists(let name) {
            let taken = ValidationIssue(
                .error,
                at: JSONPath.root.appending("key"),
                rule: "duplicate",
                "an experiment \"\(name)\" already exists in this environment; choose another key"
            )
            return try await renderForm(context: context, fields: form.fields, problems: [taken])
        }
    }

    /// The form, empty or as sent with its problems (422).
    private func renderForm(
        context: VaneRequestContext,
        fields: [String: String],
        problems: [ValidationIssue]
    ) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let live = try await store.liveTemplate(key)
        let base = ConsolePaths.environment(key)
        return renderer.render(
            .experimentNew,
            chrome: try await environmentChrome(
                title: "New experiment",
                user: user,
                project: project,
                environment: environment,
                tab: "experiments"
            ),
            page: ExperimentForm(
                template: live.template,
                fields: fields,
                problems: problems,
                action: base + "/experiments",
                csrf: session.csrfToken,
                conditionsHref: base + "/conditions",
                listHref: base + "/experiments"
            ),
            context: context,
            status: problems.isEmpty ? .ok : .unprocessableContent
        )
    }
}

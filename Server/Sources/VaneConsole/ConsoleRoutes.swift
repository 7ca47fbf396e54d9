import HTTPTypes
package import Hummingbird
import NIOCore
package import VaneOIDC
package import VaneServerCore

/// The web console, served at `/` beside the API: server-rendered pages and plain forms, with a
/// little script for conveniences. It builds one controller per area, each holding only the
/// services it uses, and registers their routes in groups whose middleware checks sign-in and
/// role (``ConsoleRouteGroups``). Every change a person makes goes through the same
/// ``Principal/require(_:)`` and the same store and publisher as the API, so the audit log
/// names the person and the console can do nothing the API would refuse.
package struct ConsoleRoutes {
    let store: ConfigStore
    let accounts: Accounts
    let drafts: DraftStore
    let keys: KeyIndex
    let streamHub: StreamHub
    let publisher: TemplatePublisher
    let experiments: ExperimentStore
    let experimentLifecycle: ExperimentLifecycle
    /// The application's, so the console's rollout changes read the same clock as the API's and the guard's.
    let rolloutLifecycle: RolloutLifecycle
    /// Where webhook endpoints may point (the API's and the delivery service's check).
    let webhookDestination: WebhookDestination
    let renderer: ConsolePageRenderer
    /// Whether session cookies get `Secure` (the server terminates TLS itself).
    let secureCookies: Bool
    /// Sign-in through the company's identity provider, when configured.
    let singleSignOn: SingleSignOn?

    package init(
        store: ConfigStore,
        accounts: Accounts,
        drafts: DraftStore,
        keys: KeyIndex,
        streamHub: StreamHub,
        publisher: TemplatePublisher,
        experiments: ExperimentStore,
        experimentLifecycle: ExperimentLifecycle,
        rolloutLifecycle: RolloutLifecycle,
        webhookDestination: WebhookDestination,
        renderer: ConsolePageRenderer,
        secureCookies: Bool,
        singleSignOn: SingleSignOn? = nil
    ) {
        self.store = store
        self.accounts = accounts
        self.drafts = drafts
        self.keys = keys
        self.streamHub = streamHub
        self.publisher = publisher
        self.experiments = experiments
        self.experimentLifecycle = experimentLifecycle
        self.rolloutLifecycle = rolloutLifecycle
        self.webhookDestination = webhookDestination
        self.renderer = renderer
        self.secureCookies = secureCookies
        self.singleSignOn = singleSignOn
    }

    package func register(on router: Router<VaneRequestContext>) {
        // Static files: public, immutable under their content-hashed names.
        router.get("assets/:file", use: asset)
        let routes = ConsoleRouteGroups(
            router: router,
            console: ConsoleMiddleware(accounts: accounts, renderer: renderer)
        )
        // What drafts change, worked out once per draft and live version, for every page of drafts.
        let analyses = DraftAnalysisCache()
        // Change requests apply through the same publisher and lifecycle as every other path.
        let applying = ChangeRequestApplying(publisher: publisher, lifecycle: experimentLifecycle)
        let account = AccountController(
            accounts: accounts,
            store: store,
            renderer: renderer,
            secureCookies: secureCookies,
            singleSignOnName: singleSignOn?.providerName
        )
        account.register(on: routes)
        if let singleSignOn {
            SingleSignOnController(singleSignOn: singleSignOn, account: account).register(on: routes)
        }
        ProjectsController(store: store, renderer: renderer).register(on: routes)
        FlagsController(store: store, drafts: drafts, publisher: publisher, analyses: analyses, renderer: renderer)
            .register(on: routes)
        ConditionsController(store: store, drafts: drafts, publisher: publisher, analyses: analyses, renderer: renderer)
            .register(on: routes)
        EvaluateController(store: store, drafts: drafts, publisher: publisher, analyses: analyses, renderer: renderer)
            .register(on: routes)
        ReviewController(
            store: store,
            drafts: drafts,
            publisher: publisher,
            requests: applying.requests,
            analyses: analyses,
            renderer: renderer
        ).register(on: routes)
        ChangeRequestsController(store: store, drafts: drafts, applying: applying, renderer: renderer)
            .register(on: routes)
        HistoryController(store: store, drafts: drafts, publisher: publisher, renderer: renderer).register(on: routes)
        ExperimentsController(
            store: store,
            drafts: drafts,
            experiments: experiments,
            experimentLifecycle: experimentLifecycle,
            requests: applying.requests,
            renderer: renderer
        ).register(on: routes)
        RolloutsController(
            store: store,
            drafts: drafts,
            lifecycle: rolloutLifecycle,
            requests: applying.requests,
            renderer: renderer
        ).register(on: routes)
        KeysController(store: store, keys: keys, streamHub: streamHub, renderer: renderer).register(on: routes)
        PeopleController(store: store, accounts: accounts, renderer: renderer).register(on: routes)
        WebhooksController(
            store: store,
            webhooks: WebhookStore(engine: store.engine),
            destination: webhookDestination,
            renderer: renderer
        ).register(on: routes)
    }

    @Sendable func asset(_ request: Request, context: VaneRequestContext) async throws -> Response {
        guard let name = context.parameters.get("file"), let file = renderer.assets.files[name] else {
            return Response(status: .notFound)
        }
        var headers = HTTPFields()
        headers[.contentType] = file.contentType
        headers[.cacheControl] = "public, max-age=31536000, immutable"
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: file.body))
    }
}

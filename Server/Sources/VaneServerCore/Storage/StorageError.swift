/// A storage failure, with what to do about it.
package enum StorageError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The database could not be opened.
    case cannotOpen(String, String)
    /// The database's schema is newer than this server understands.
    case schemaTooNew(found: Int, supported: Int)
    /// A project with this id already exists.
    case projectExists(String)
    /// An environment with this id already exists in the project.
    case environmentExists(project: String, environment: String)
    /// No such project.
    case projectNotFound(String)
    /// No such environment.
    case environmentNotFound(project: String, environment: String)
    /// No such template version.
    case versionNotFound(Int64)
    /// Someone published since the version the publisher read.
    case versionConflict(expected: Int64, current: Int64)
    /// No such API key.
    case keyNotFound(String)
    /// A page token this server did not hand out.
    case invalidPageToken(String)
    /// A person with this email already has an account.
    case userExists(String)
    /// No such person.
    case userNotFound(String)
    /// An experiment with this key already exists in the environment.
    case experimentExists(String)
    /// No such experiment in the environment.
    case experimentNotFound(String)
    /// The experiment's status does not allow the change (starting a running experiment,
    /// stopping a draft).
    case experimentStatus(key: String, status: String, action: String)
    /// Another running experiment of the environment controls one of the parameters.
    case parameterInRunningExperiment(parameter: String, experiment: String)
    /// A rollout with this id already exists in the environment.
    case rolloutExists(String)
    /// No such rollout in the environment.
    case rolloutNotFound(String)
    /// The rollout's state does not allow the change (starting a running rollout, resuming a
    /// stopped one), or another node changed it first.
    case rolloutState(id: String, state: String, action: String)
    /// No such webhook endpoint in the project.
    case webhookEndpointNotFound(String)
    /// The endpoint never received this message.
    case webhookMessageNotFound(String)
    /// SQLite's write lock stayed taken by another process past the busy timeout; nothing was
    /// written, and the same request can be sent again.
    case busy

    /// How long a client should wait after ``busy``.
    package static let busyRetryAfterSeconds = 1

    /// What happened and what to do.
    package var description: String {
        switch self {
        case .cannotOpen(let location, let reason):
            return
                "cannot open the database at \(location): \(reason). Check the path or URL, permissions, and that the server is running"
        case .schemaTooNew(let found, let supported):
            return "the database has schema version \(found), but this server supports up to \(supported); upgrade vane"
        case .projectExists(let id): return "a project with id \"\(id)\" already exists"
        case .environmentExists(let project, let environment):
            return "project \"\(project)\" already has an environment \"\(environment)\""
        case .projectNotFound(let id): return "no project \"\(id)\"; create it with POST /v1/projects"
        case .environmentNotFound(let project, let environment):
            return
                "project \"\(project)\" has no environment \"\(environment)\"; create it with POST /v1/projects/\(project)/environments"
        case .versionNotFound(let number): return "no template version \(number)"
        case .versionConflict(let expected, let current):
            return "the template changed: you read version \(expected), the current version is \(current). "
                + "GET the template again, reapply your change and send its ETag, or send If-Match: * to overwrite"
        case .keyNotFound(let id): return "no API key with id \"\(id)\""
        case .userExists(let email):
            return "\(email) already has an account; change its role or reset its password instead"
        case .userNotFound(let id): return "no user \"\(id)\"; list them with GET /v1/users"
        case .invalidPageToken(let token):
            return "the page token \"\(token.prefix(64))\" is not one this server returned; "
                + "start again without pageToken and pass the nextPageToken of each page"
        case .experimentExists(let key):
            return "an experiment \"\(key)\" already exists in this environment; choose another key"
        case .experimentNotFound(let key):
            return "no experiment \"\(key)\" in this environment; list them with GET …/experiments"
        case .experimentStatus(let key, let status, let action):
            switch (action, status) {
            case ("start", "stopped"):
                return
                    "experiment \"\(key)\" is stopped and does not start again; create a new experiment to test again"
            default:
                return "experiment \"\(key)\" is \(status), so it cannot \(action)"
            }
        case .parameterInRunningExperiment(let parameter, let experiment):
            return "parameter \"\(parameter)\" is already tested by running experiment \"\(experiment)\"; "
                + "stop that experiment first, or test another parameter"
        case .rolloutExists(let id):
            return "a rollout \"\(id)\" already exists in this environment; choose another id"
        case .rolloutNotFound(let id):
            return "no rollout \"\(id)\" in this environment; list them with GET …/rollouts"
        case .rolloutState(let id, let state, let action):
            return "rollout \"\(id)\" is \(state), so it cannot \(action)"
        case .webhookEndpointNotFound(let id):
            return "no webhook endpoint \"\(id.prefix(64))\" in this project; list them with GET …/webhooks"
        case .webhookMessageNotFound(let id):
            return
                "this webhook endpoint never received a message \"\(id.prefix(64))\"; list its deliveries with GET …/webhooks/{id}/deliveries"
        case .busy:
            return "the database is busy (another process holds its write lock); nothing was written. "
                + "Retry after \(Self.busyRetryAfterSeconds) s"
        }
    }
}

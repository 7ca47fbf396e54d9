package import VaneCore

/// The one way an experiment is created, starts or stops, for the API and the console alike: a
/// definition is read by ``ExperimentDefinitionReader`` and checked against the live template
/// (``ExperimentTemplateCheck``), a start is checked against the live template again, and either change is served to fetch on this node
/// at once (other nodes pick it up with ``serveRunning()`` on their next version poll).
package struct ExperimentLifecycle: Sendable {
    package let store: ConfigStore
    package let experiments: ExperimentStore
    package let cache: ServingCache

    package init(store: ConfigStore, experiments: ExperimentStore, cache: ServingCache) {
        self.store = store
        self.experiments = experiments
        self.cache = cache
    }

    /// Creates a draft from a definition as `POST …/experiments` carries it (the console's form
    /// builds the same object), checked against the live template.
    /// - Throws: ``ExperimentDefinitionRefusal`` with every problem at its JSON path;
    ///   ``StorageError`` as the store throws it (no such environment, the key is taken).
    package func create(_ body: JSONObject, in environment: EnvironmentKey, actor: Actor) async throws -> Experiment {
        let live = try await store.liveTemplate(environment)
        let definition: ExperimentDefinition
        switch ExperimentDefinitionReader.read(body) {
        case .success(let read): definition = read
        case .failure(let error): throw ExperimentDefinitionRefusal(issues: error.issues)
        }
        // Keys that start so name the rollouts' step experiments (docs/ROLLOUTS.md).
        guard !definition.key.hasPrefix(RolloutPlan.experimentKeyPrefix) else {
            throw ExperimentDefinitionRefusal(
                issues: [
                    ValidationIssue(
                        .error,
                        at: JSONPath.root.appending("key"),
                        rule: "reserved-key",
                        "\"\(definition.key)\" starts with \"\(RolloutPlan.experimentKeyPrefix)\", which names the steps "
                            + "of rollouts; choose another key"
                    )
                ]
            )
        }
        let issues = ExperimentTemplateCheck.issues(definition, against: live.template, version: live.version)
        guard issues.isEmpty else { throw ExperimentDefinitionRefusal(issues: issues) }
        return try await experiments.create(definition, in: environment, actor: actor)
    }

    /// Starts a draft, after checking it against the live template (it may have changed since
    /// the experiment was created).
    /// - Throws: ``ExperimentStartRefusal`` naming the problems; ``StorageError`` as the store
    ///   throws it (no such experiment, not a draft, a parameter in another running experiment).
    /// - Parameter authorization: What allows it under the change policy; the API and the console
    ///   start directly, an approved change request through ``ChangeRequestApplying``.
    package func start(
        _ environment: EnvironmentKey,
        key: String,
        actor: Actor,
        authorization: ChangeAuthorization = .direct("starting the experiment")
    ) async throws -> Experiment {
        let live = try await store.liveTemplate(environment)
        if let experiment = try await experiments.experiment(environment, key: key), experiment.status == .draft {
            let issues = ExperimentTemplateCheck.issues(
                experiment.definition,
                against: live.template,
                version: live.version
            )
            guard issues.isEmpty else { throw ExperimentStartRefusal(key: key, issues: issues) }
        }
        let started = try await experiments.start(
            environment,
            key: key,
            liveVersion: live.version,
            actor: actor,
            authorization: authorization
        )
        try await serveRunning(in: environment)
        return started
    }

    /// Stops a running experiment.
    /// - Throws: ``StorageError`` as the store throws it.
    package func stop(
        _ environment: EnvironmentKey,
        key: String,
        actor: Actor,
        authorization: ChangeAuthorization = .direct("stopping the experiment")
    ) async throws -> Experiment {
        try await store.requireEnvironment(environment)
        let stopped = try await experiments.stop(environment, key: key, actor: actor, authorization: authorization)
        try await serveRunning(in: environment)
        return stopped
    }

    /// Serves every environment's running experiments: at start-up and on each version poll.
    package func serveRunning() async throws {
        cache.serveRunning(try await experiments.allRunning().mapValues(ServedExperiments.init))
    }

    /// Serves one environment's running experiments on this node (after a rollout's step changes them).
    package func serveRunning(in environment: EnvironmentKey) async throws {
        let running = try await experiments.experiments(environment, status: .running)
        cache.serve(ServedExperiments(running.map(\.definition)), in: environment)
    }
}

/// A draft that cannot start on the live template: the template changed since the experiment
/// was created (a parameter or condition removed, a variant's condition unused).
package struct ExperimentStartRefusal: Error, Sendable, CustomStringConvertible {
    package var key: String
    package var issues: [ValidationIssue]

    package var description: String {
        "experiment \"\(key)\" cannot start on the live template: \(ExperimentDefinitionReader.summary(issues))"
    }
}

/// A definition that cannot become an experiment: it does not read, or does not fit the live
/// template. Each issue has its JSON path in the definition.
package struct ExperimentDefinitionRefusal: Error, Sendable, CustomStringConvertible {
    package var issues: [ValidationIssue]

    package var description: String { ExperimentDefinitionReader.summary(issues) }
}

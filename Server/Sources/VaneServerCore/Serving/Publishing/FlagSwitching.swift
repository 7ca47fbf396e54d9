import Foundation
package import VaneCore

/// The one way a Boolean flag's kill switch is thrown, for the admin API and the console alike:
/// the plan (what would change, on the live template) and its publish, with a message for the
/// history. The rule of what "off" and "on" mean is ``KillSwitch``.
package struct FlagSwitching: Sendable {
    package let store: ConfigStore
    package let publisher: TemplatePublisher

    package init(store: ConfigStore, publisher: TemplatePublisher) {
        self.store = store
        self.publisher = publisher
    }

    /// Where the switch goes.
    package enum Position: String, Sendable {
        case on, off

        /// Reads `on` or `off`.
        /// - Throws: ``FlagSwitchRefusal/position(_:)`` for anything else.
        package init(_ text: String) throws(FlagSwitchRefusal) {
            guard let position = Position(rawValue: text) else { throw .position(text) }
            self = position
        }
    }

    /// One value the switch changes.
    package struct Change: Sendable, Equatable {
        /// The condition of a conditional value; nil for users who match no condition.
        package var condition: String?
        package var before: ParameterValue?
        package var after: ParameterValue?
    }

    /// What throwing the switch would publish.
    package struct Plan: Sendable {
        package var environment: EnvironmentKey
        package var flag: String
        package var position: Position
        /// The live version the plan was made on.
        package var version: Int64
        /// Whether the flag reaches live-updating apps at once.
        package var realtime: Bool
        /// Every value of the flag, before and after, in template condition order after the
        /// value for everyone else.
        package var changes: [Change]
        /// The live template with the flag switched.
        package var template: ConfigTemplate

        /// Whether the switch changes any value (switching an off flag off changes none).
        package var changesSomething: Bool { changes.contains { $0.before != $0.after } }
    }

    /// What switching `flag` to `position` would publish on the live template.
    /// - Throws: ``StorageError/environmentNotFound`` and other storage errors;
    ///   ``FlagSwitchRefusal`` for a flag that is missing or not Boolean.
    package func plan(_ environment: EnvironmentKey, flag: String, to position: Position) async throws -> Plan {
        let live = try await publisher.liveTemplate(environment)
        guard let parameter = live.template.parameter(forKey: flag) else {
            throw FlagSwitchRefusal.noSuchFlag(flag, version: live.version)
        }
        guard KillSwitch.applies(to: parameter) else {
            throw FlagSwitchRefusal.notBoolean(flag, type: (parameter.valueType ?? .string).rawValue.lowercased())
        }
        let switched: TemplateParameter
        switch position {
        case .off: switched = KillSwitch.switchedOff(parameter)
        case .on:
            switched = KillSwitch.switchedOn(
                parameter,
                earlier: try await earlierForms(of: flag, in: environment, before: live.version),
                in: live.template
            )
        }
        var changes = [Change(condition: nil, before: parameter.defaultValue, after: switched.defaultValue)]
        let names = Set(parameter.conditionalValues.map(\.conditionName)).union(
            switched.conditionalValues.map(\.conditionName)
        )
        for condition in live.template.conditions where names.contains(condition.name) {
            changes.append(
                Change(
                    condition: condition.name,
                    before: parameter.conditionalValue(for: condition.name),
                    after: switched.conditionalValue(for: condition.name)
                )
            )
        }
        guard let template = TemplateEdits.replacing(switched, in: live.template) else {
            throw FlagSwitchRefusal.noSuchFlag(flag, version: live.version)
        }
        return Plan(
            environment: environment,
            flag: flag,
            position: position,
            version: live.version,
            realtime: parameter.keyMetadata.realtime,
            changes: changes,
            template: template
        )
    }

    /// Publishes a plan as the next version, with `message` as its description. A plan that
    /// changes nothing publishes nothing and answers the live version.
    /// - Parameter seenVersion: The version the caller looked at, when it says; it must still be live.
    /// - Throws: ``FlagSwitchRefusal`` (no message, a newer version since); ``PublishError`` as
    ///   the publisher throws it (a publish that landed between plan and publish is a version conflict).
    package func publish(
        _ plan: Plan,
        message: String,
        seenVersion: Int64?,
        actor: Actor
    ) async throws -> (version: Int64, published: Bool) {
        let message = message.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !message.isEmpty else { throw FlagSwitchRefusal.noMessage }
        if let seenVersion, seenVersion != plan.version {
            throw FlagSwitchRefusal.versionMoved(seen: seenVersion, live: plan.version)
        }
        guard plan.changesSomething else { return (plan.version, false) }
        var template = plan.template
        template.version = TemplateVersion(description: String(message.prefix(500)))
        let served = try await publisher.publish(
            try publisher.check(template),
            to: plan.environment,
            expectedVersion: plan.version,
            actor: actor,
            authorization: .killSwitch,
            change: .killSwitch(flag: plan.flag, position: plan.position.rawValue)
        )
        return (served.versionNumber, true)
    }

    /// The flag's forms in the versions before `number`, newest first, back to the newest one in
    /// which someone got `true` (at most 50 versions).
    package func earlierForms(
        of flag: String,
        in environment: EnvironmentKey,
        before number: Int64
    ) async throws -> [TemplateParameter] {
        var forms: [TemplateParameter] = []
        var version = number - 1
        while version >= 1, version >= number - 50 {
            if let stored = try await store.version(
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                number: version
            ), let parameter = stored.template.parameter(forKey: flag) {
                forms.append(parameter)
                if KillSwitch.isOn(parameter) { break }
            }
            version -= 1
        }
        return forms
    }
}

/// Why a kill switch cannot be thrown; each case says what to do instead.
package enum FlagSwitchRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    case noSuchFlag(String, version: Int64)
    case notBoolean(String, type: String)
    case position(String)
    case noMessage
    case versionMoved(seen: Int64, live: Int64)

    package var description: String {
        switch self {
        case .noSuchFlag(let flag, let version):
            "version \(version) has no flag \"\(flag.prefix(100))\""
        case .notBoolean(let flag, let type):
            "\"\(flag.prefix(100))\" is a \(type) parameter; only Boolean flags have a kill switch"
        case .position(let text):
            "the switch goes \"on\" or \"off\", not \"\(text.prefix(20))\""
        case .noMessage:
            "say why: the message goes into the history"
        case .versionMoved(let seen, let live):
            "version \(live) is live, not \(seen): someone published since; check the change and switch again"
        }
    }
}

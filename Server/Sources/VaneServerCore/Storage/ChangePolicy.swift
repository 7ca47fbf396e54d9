package import VaneCore

/// Per environment: whether what clients get changes only through approved change requests,
/// how many approvals a request needs and who may give them (docs/GOVERNANCE.md).
package struct ChangePolicy: Sendable, Hashable {
    /// Approvals a request needs, 1–10; 0 when no policy is in force (today's behaviour).
    package var approvalsRequired: Int
    /// Whether an author's own approval counts (default no).
    package var selfApproval: Bool
    /// Who may approve or reject; empty: anyone who may publish the environment. See
    /// ``ChangeActor/matches(_:)`` for the entries.
    package var approvers: [String]
    /// Who may break glass: apply a request at once, without approvals (default nobody).
    package var breakGlass: [String]
    /// Whether the kill switch (`POST …/flags/{key}/switch`) is pre-approved: it publishes at
    /// once, audited as always.
    package var killSwitchPreApproved: Bool

    /// No policy: every path publishes at once.
    package static let off = ChangePolicy(
        approvalsRequired: 0,
        selfApproval: false,
        approvers: [],
        breakGlass: [],
        killSwitchPreApproved: false
    )

    /// The most approvals a policy can require.
    package static let maximumApprovals = 10
    /// The most entries in `approvers` or `breakGlass`.
    package static let maximumEntries = 100

    /// Whether changes need approved change requests.
    package var inForce: Bool { approvalsRequired > 0 }

    /// The policy as the API shows and the database stores it.
    package func json() -> JSONObject {
        [
            "required": .bool(inForce),
            "approvals": .number(JSONNumber(approvalsRequired)),
            "selfApproval": .bool(selfApproval),
            "approvers": .array(approvers.map(JSONValue.string)),
            "breakGlass": .array(breakGlass.map(JSONValue.string)),
            "killSwitchPreApproved": .bool(killSwitchPreApproved),
        ]
    }

    /// Reads a policy: `required` (Boolean, needed), `approvals` (1–10 when required), and the
    /// optional `selfApproval`, `approvers`, `breakGlass`, `killSwitchPreApproved`.
    /// - Parameter path: Where the object is in the request, for the messages.
    /// - Throws: ``ChangeInputError`` naming the member and what was expected.
    package static func read(_ object: JSONObject, path: String = "") throws(ChangeInputError) -> ChangePolicy {
        func name(_ member: String) -> String { path.isEmpty ? member : path + "." + member }
        let known: Set<String> = [
            "required", "approvals", "selfApproval", "approvers", "breakGlass", "killSwitchPreApproved",
        ]
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            throw ChangeInputError(
                path: name(unknown),
                message: "unknown member; a policy has \(known.sorted().joined(separator: ", "))"
            )
        }
        guard let required = object["required"]?.boolValue else {
            throw ChangeInputError(path: name("required"), message: "say true or false: do changes need approval?")
        }
        func flag(_ member: String) throws(ChangeInputError) -> Bool {
            guard let value = object[member] else { return false }
            guard let bool = value.boolValue else {
                throw ChangeInputError(
                    path: name(member),
                    message: "expected true or false, found \(value.kindDescription)"
                )
            }
            return bool
        }
        func list(_ member: String) throws(ChangeInputError) -> [String] {
            guard let value = object[member] else { return [] }
            guard let array = value.arrayValue, array.count <= maximumEntries else {
                throw ChangeInputError(
                    path: name(member),
                    message:
                        "expected an array of at most \(maximumEntries) emails, user or key ids, or role:admin / role:editor"
                )
            }
            var entries: [String] = []
            for (index, item) in array.enumerated() {
                guard let text = item.stringValue, !text.isEmpty, text.count <= 320 else {
                    throw ChangeInputError(
                        path: name(member) + "[\(index)]",
                        message: "expected an email, a user or key id, or role:admin / role:editor"
                    )
                }
                entries.append(text.lowercased())
            }
            return entries
        }
        var approvals = 0
        if required {
            guard let number = object["approvals"]?.numberValue?.intValue, (1...maximumApprovals).contains(number)
            else {
                throw ChangeInputError(
                    path: name("approvals"),
                    message: "a required policy needs 1 to \(maximumApprovals) approvals"
                )
            }
            approvals = number
        }
        return ChangePolicy(
            approvalsRequired: approvals,
            selfApproval: try flag("selfApproval"),
            approvers: try list("approvers"),
            breakGlass: try list("breakGlass"),
            killSwitchPreApproved: try flag("killSwitchPreApproved")
        )
    }
}

/// Who acts on a change request, as the policy sees them: storage cannot see the
/// ``Principal`` (a layer above), so the routes hand over what the policy's lists name.
package struct ChangeActor: Sendable, Hashable {
    /// For the audit log and the request.
    package var actor: Actor
    /// The key's or the person's id (what self-approval compares).
    package var id: String
    /// A person's email; nil for a key.
    package var email: String?
    /// A person's role (`admin`, `editor`, `viewer`); nil for a key: roles name people only.
    package var role: String?

    package init(actor: Actor, id: String, email: String?, role: String?) {
        self.actor = actor
        self.id = id
        self.email = email
        self.role = role
    }

    /// Whether a policy list entry names this actor: their id (a key's or a person's), a person's
    /// email, or `role:admin` / `role:editor` for people of that role.
    package func matches(_ entry: String) -> Bool {
        let entry = entry.lowercased()
        if entry == id.lowercased() { return true }
        if let email, entry == email.lowercased() { return true }
        if let role, entry == "role:" + role { return true }
        return false
    }

    /// Whether any entry of a list names this actor.
    package func isNamed(in entries: [String]) -> Bool { entries.contains(where: matches) }
}

/// A member of a change request or policy that cannot be read: where, and what was expected.
package struct ChangeInputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The JSON path of the member (`change.template`, `approvals`).
    package var path: String
    package var message: String

    package var description: String { "\(path): \(message)" }
}

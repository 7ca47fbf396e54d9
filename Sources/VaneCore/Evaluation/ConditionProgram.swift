import Foundation

/// Every condition of a template as one flat program: its trees' nodes in prefix order, in one
/// array of plain values, with the attribute tests, percent ranges, seeds and attribute names
/// beside them.
///
/// An evaluation reads them through pointers (``ConditionEvaluation``), so walking the trees costs
/// no reference counting: the indirect enum tree it replaced retained and released a node's box
/// and its operands' array at every step, a tenth of a typical evaluation.
struct ConditionProgram: Sendable {
    /// The nodes of every condition, each tree in prefix order: a node's operands follow it, and
    /// `end` is the index just past its subtree.
    let steps: [ConditionStep]
    /// Per condition, the index of its tree's first step.
    let roots: [Int32]
    /// The attribute rules' tests, by ``ConditionStep/detail``.
    let tests: [CompiledAttributeTest]
    /// The same tests unretained, for the walk: `tests` owns them for the program's life, so an
    /// evaluation borrows each one instead of retaining and releasing it (a tenth of a large
    /// evaluation was that reference counting).
    private let borrowedTests: [Unmanaged<CompiledAttributeTest>]
    /// The percent rules' ranges, by ``ConditionStep/detail``.
    let ranges: [PercentBounds]
    /// Every percent seed's hash prefix (`seed.` in UTF-8) back to back, numbered by
    /// ``ConditionStep/operand``: seed `s` is `seedBytes[seedStarts[s]..<seedStarts[s + 1]]`.
    let seedBytes: [UInt8]
    let seedStarts: [Int32]
    /// The attribute names rules read, numbered by ``ConditionStep/operand``; each evaluation
    /// looks each one up at most once.
    let slots: [AttributeSlot]
    /// The slots' names, to match a context's attribute names byte for byte when every slot name
    /// is ASCII (then equal bytes and equal strings are the same thing); nil otherwise.
    let asciiSlotNames: FoldedStringSet?
    /// Slot numbers by name: a context's names that are not ASCII are matched as strings.
    let slotIndex: [String: Int32]

    /// Compiles each condition's expression, numbered in order.
    init(_ expressions: [ConditionExpression]) {
        var builder = Builder()
        var roots: [Int32] = []
        roots.reserveCapacity(expressions.count)
        for expression in expressions {
            roots.append(Int32(builder.steps.count))
            builder.append(expression)
        }
        steps = builder.steps
        self.roots = roots
        tests = builder.tests
        borrowedTests = builder.tests.map { Unmanaged.passUnretained($0) }
        ranges = builder.ranges
        seedBytes = builder.seedBytes
        seedStarts = builder.seedStarts
        slots = builder.slots
        slotIndex = builder.slotIndex
        let names = builder.slots.map(\.name)
        asciiSlotNames =
            names.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } }
            ? FoldedStringSet(names, folding: .none) : nil
    }

    /// Runs `body` with a fresh evaluation of these conditions for one context: the tables and the
    /// memos it needs, held in place for the body's time (the memos on the stack where they fit).
    /// With `everyAttribute`, for a whole template whose rules read most slots, the context's
    /// attributes are matched to the slots at once, one pass over them, instead of one `Dictionary`
    /// lookup per slot on first use.
    func withEvaluation<Result>(
        _ context: EvaluationContext,
        now: Date,
        everyAttribute: Bool = false,
        _ body: (ConditionEvaluation) -> Result
    ) -> Result {
        let conditionCount = roots.count
        let slotCount = slots.count
        var randomizationId = context.randomizationId ?? ""
        // In place for a native string; copied once only when the id is not contiguous UTF-8.
        return randomizationId.withUTF8 { id in
            steps.withUnsafeBufferPointer { steps in
                roots.withUnsafeBufferPointer { roots in
                    borrowedTests.withUnsafeBufferPointer { tests in
                        ranges.withUnsafeBufferPointer { ranges in
                            seedBytes.withUnsafeBufferPointer { seedBytes in
                                seedStarts.withUnsafeBufferPointer { seedStarts in
                                    slots.withUnsafeBufferPointer { slots in
                                        withUnsafeTemporaryAllocation(
                                            of: UInt8.self,
                                            capacity: conditionCount + slotCount
                                        ) { states in
                                            withUnsafeTemporaryAllocation(
                                                of: UInt64.self,
                                                capacity: seedStarts.count - 1
                                            ) { buckets in
                                                withUnsafeTemporaryAllocation(
                                                    of: AttributeValue.self,
                                                    capacity: slotCount
                                                ) { slotValues in
                                                    withUnsafeTemporaryAllocation(
                                                        of: VersionComparison.Version?.self,
                                                        capacity: slotCount
                                                    ) { slotVersions in
                                                        states.initialize(repeating: 0)
                                                        buckets.initialize(repeating: .max)
                                                        slotVersions.initialize(repeating: nil)
                                                        let evaluation = ConditionEvaluation(
                                                            steps: steps,
                                                            roots: roots,
                                                            tests: tests,
                                                            ranges: ranges,
                                                            seedBytes: seedBytes,
                                                            seedStarts: seedStarts,
                                                            randomizationId: id.isEmpty ? nil : id,
                                                            slots: slots,
                                                            context: context,
                                                            now: now,
                                                            conditionStates: UnsafeMutableBufferPointer(
                                                                rebasing: states[0..<conditionCount]
                                                            ),
                                                            slotStates: UnsafeMutableBufferPointer(
                                                                rebasing: states[conditionCount...]
                                                            ),
                                                            slotValues: slotValues,
                                                            slotVersions: slotVersions,
                                                            buckets: buckets
                                                        )
                                                        defer { evaluation.releaseAttributes() }
                                                        // Each pass costs a hash per attribute, a lookup
                                                        // per slot: worth it unless the context has many
                                                        // attributes no rule reads.
                                                        if everyAttribute, let asciiSlotNames,
                                                            context.attributes.count <= 2 * slotCount
                                                        {
                                                            evaluation.loadEveryAttribute(
                                                                asciiSlotNames,
                                                                slotIndex: slotIndex
                                                            )
                                                        }
                                                        return body(evaluation)
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with the slot and test of every attribute rule.
    func forEachAttributeTest(_ body: (_ slot: Int, _ test: CompiledAttributeTest) -> Void) {
        for step in steps where step.kind == .attribute {
            body(Int(step.operand), tests[Int(step.detail)])
        }
    }

    private struct Builder {
        var steps: [ConditionStep] = []
        var tests: [CompiledAttributeTest] = []
        var ranges: [PercentBounds] = []
        var seedBytes: [UInt8] = []
        var seedStarts: [Int32] = [0]
        var seedIndex: [String: Int32] = [:]
        var slots: [AttributeSlot] = []
        var slotIndex: [String: Int32] = [:]

        mutating func seed(_ seed: String) -> Int32 {
            if let existing = seedIndex[seed] { return existing }
            let index = Int32(seedStarts.count - 1)
            seedBytes += PercentBucket.seedPrefix(seed)
            seedStarts.append(Int32(seedBytes.count))
            seedIndex[seed] = index
            return index
        }

        mutating func slot(_ name: String, element: ConditionElement?) -> Int32 {
            if let existing = slotIndex[name] { return existing }
            slots.append(AttributeSlot(name: name, element: element))
            slotIndex[name] = Int32(slots.count - 1)
            return Int32(slots.count - 1)
        }

        mutating func append(_ expression: ConditionExpression) {
            let index = steps.count
            switch expression {
            case .constant(let value):
                steps.append(ConditionStep(kind: value ? .alwaysTrue : .alwaysFalse))
            case .and(let operands):
                steps.append(ConditionStep(kind: .and))
                for operand in operands { append(operand) }
            case .or(let operands):
                steps.append(ConditionStep(kind: .or))
                for operand in operands { append(operand) }
            case .not(let operand):
                steps.append(ConditionStep(kind: .not))
                append(operand)
            case .percent(let percent):
                steps.append(
                    ConditionStep(
                        kind: .percent,
                        operand: seed(percent.seed),
                        detail: Int32(ranges.count)
                    )
                )
                ranges.append(PercentBounds(percent.range))
            case .attribute(let condition):
                var element: ConditionElement?
                if case .element(let named) = condition.subject { element = named }
                steps.append(
                    ConditionStep(
                        kind: .attribute,
                        operand: slot(condition.attributeName, element: element),
                        detail: Int32(tests.count)
                    )
                )
                tests.append(CompiledAttributeTest(condition.test))
            }
            steps[index].end = Int32(steps.count)
        }
    }
}

/// One node of a condition tree in a ``ConditionProgram``: plain values only.
struct ConditionStep: Sendable {
    enum Kind: UInt8, Sendable {
        case alwaysTrue, alwaysFalse, and, or, not, percent, attribute
    }

    var kind: Kind
    /// A percent rule's seed number; an attribute rule's slot.
    var operand: Int32 = 0
    /// A percent rule's range number; an attribute rule's test number.
    var detail: Int32 = 0
    /// The index just past this node's subtree (its operands follow it).
    var end: Int32 = 0
}

/// A ``PercentRange`` as two bounds, `lower < bucket <= upper`, the same answers for every range
/// (an unknown operator's bounds contain nothing; a NaN bound fails every comparison as before).
struct PercentBounds: Sendable {
    let lower: Double
    let upper: Double

    init(_ range: PercentRange) {
        switch range {
        case .lessOrEqual(let bound): (lower, upper) = (-.infinity, bound)
        case .greaterThan(let bound): (lower, upper) = (bound, .infinity)
        case .between(let low, let high): (lower, upper) = (low, high)
        case .unknown: (lower, upper) = (.infinity, -.infinity)
        }
    }

    @inline(__always)
    func contains(microPercentile: UInt64) -> Bool {
        // Exact: every bucket is below 2^53.
        let bucket = Double(microPercentile)
        return lower < bucket && bucket <= upper
    }
}

/// An attribute name rules read, with the built-in element it names, if any.
struct AttributeSlot: Sendable {
    let name: String
    let element: ConditionElement?
}

import Foundation

/// One evaluation of a template's conditions for one context: the compiled program's tables and
/// this evaluation's memos (condition results, attribute values, percent buckets), all reached
/// through pointers, so walking the trees retains and releases nothing.
///
/// Made only by ``ConditionProgram/withEvaluation(_:now:everyAttribute:_:)``, for the time of its
/// body.
struct ConditionEvaluation {
    let steps: UnsafeBufferPointer<ConditionStep>
    let roots: UnsafeBufferPointer<Int32>
    /// Owned by the program for longer than the evaluation.
    let tests: UnsafeBufferPointer<Unmanaged<CompiledAttributeTest>>
    let ranges: UnsafeBufferPointer<PercentBounds>
    /// Every seed's hash prefix (`seed.` in UTF-8) back to back; seed `s` is
    /// `seedBytes[seedStarts[s]..<seedStarts[s + 1]]`.
    let seedBytes: UnsafeBufferPointer<UInt8>
    let seedStarts: UnsafeBufferPointer<Int32>
    /// The randomization id's UTF-8, or nil without one or with an empty one: then nobody is in
    /// any percentage.
    let randomizationId: UnsafeBufferPointer<UInt8>?
    let slots: UnsafeBufferPointer<AttributeSlot>
    let context: EvaluationContext
    let now: Date
    /// Per condition: 0 until evaluated, then 1 for true and 2 for false.
    let conditionStates: UnsafeMutableBufferPointer<UInt8>
    /// Per attribute slot: 0 until looked up, then 1 (its value is in `slotValues`) or 2 (missing).
    let slotStates: UnsafeMutableBufferPointer<UInt8>
    /// Initialized only where `slotStates` is 1.
    let slotValues: UnsafeMutableBufferPointer<AttributeValue>
    /// Per attribute slot: its value read as a version by the first version rule that tested it.
    let slotVersions: UnsafeMutableBufferPointer<VersionComparison.Version?>
    /// Per seed: the id's micro-percentile, `UInt64.max` until computed.
    let buckets: UnsafeMutableBufferPointer<UInt64>

    /// Whether a condition is true, evaluating it on first use.
    @inline(__always)
    func isTrue(condition index: Int) -> Bool {
        switch conditionStates[index] {
        case 1: return true
        case 2: return false
        default:
            let result = evaluate(step: Int(roots[index]))
            conditionStates[index] = result ? 1 : 2
            return result
        }
    }

    /// The value of the subtree whose first step is `index`.
    private func evaluate(step index: Int) -> Bool {
        let step = steps[index]
        switch step.kind {
        case .alwaysTrue:
            return true
        case .alwaysFalse:
            return false
        case .and:
            var operand = index + 1
            while operand < Int(step.end) {
                if !evaluate(step: operand) { return false }
                operand = Int(steps[operand].end)
            }
            return true
        case .or:
            var operand = index + 1
            while operand < Int(step.end) {
                if evaluate(step: operand) { return true }
                operand = Int(steps[operand].end)
            }
            return false
        case .not:
            return !evaluate(step: index + 1)
        case .percent:
            // No randomization id: nobody is in any percentage.
            guard let randomizationId else { return false }
            let bucket = bucket(seed: Int(step.operand), randomizationId: randomizationId)
            return ranges[Int(step.detail)].contains(microPercentile: bucket)
        case .attribute:
            let slot = Int(step.operand)
            guard loadAttribute(slot) else { return false }
            return tests[Int(step.detail)]._withUnsafeGuaranteedRef {
                $0.evaluate(slotValues[slot], version: &slotVersions[slot])
            }
        }
    }

    /// The id's micro-percentile under a seed, hashed on first use.
    @inline(__always)
    private func bucket(seed: Int, randomizationId: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var bucket = buckets[seed]
        if bucket == .max {
            let prefix = UnsafeBufferPointer(rebasing: seedBytes[Int(seedStarts[seed])..<Int(seedStarts[seed + 1])])
            bucket = PercentBucket.microPercentile(seedPrefix: prefix, randomizationId: randomizationId)
            buckets[seed] = bucket
        }
        return bucket
    }

    /// Whether the attribute in `slot` is present, looking it up on first use.
    @inline(__always)
    private func loadAttribute(_ slot: Int) -> Bool {
        switch slotStates[slot] {
        case 1: return true
        case 2: return false
        default:
            if let value = Self.attribute(slots[slot], context: context, now: now) {
                slotValues.initializeElement(at: slot, to: value)
                slotStates[slot] = 1
                return true
            }
            slotStates[slot] = 2
            return false
        }
    }

    /// Looks every slot up at once, walking the context's attributes: a name that is ASCII is found
    /// among the slots' names by its bytes, any other by `slotIndex`; slots no attribute fills get
    /// their default or are missing.
    func loadEveryAttribute(_ asciiSlotNames: FoldedStringSet, slotIndex: [String: Int32]) {
        for (name, value) in context.attributes {
            var slot: Int?
            let isASCII = UTF8Bytes.with(name) { bytes in
                guard bytes.allSatisfy({ $0 < 0x80 }) else { return false }
                slot = asciiSlotNames.ordinal(of: bytes)
                return true
            }
            if !isASCII { slot = slotIndex[name].map(Int.init) }
            guard let slot else { continue }
            slotValues.initializeElement(at: slot, to: value)
            slotStates[slot] = 1
        }
        for slot in 0..<slotStates.count where slotStates[slot] == 0 {
            if let value = Self.defaultAttribute(slots[slot], context: context, now: now) {
                slotValues.initializeElement(at: slot, to: value)
                slotStates[slot] = 1
            } else {
                slotStates[slot] = 2
            }
        }
    }

    /// Ends the lifetime of the attribute values this evaluation looked up.
    func releaseAttributes() {
        for slot in 0..<slotStates.count where slotStates[slot] == 1 {
            _ = slotValues.moveElement(from: slot)
        }
    }

    /// The attribute a rule reads; `dateTime` defaults to the evaluation time and
    /// `app.firebaseInstallationId` to the randomization id.
    static func attribute(_ slot: AttributeSlot, context: EvaluationContext, now: Date) -> AttributeValue? {
        context.attributes[slot.name] ?? defaultAttribute(slot, context: context, now: now)
    }

    /// What a rule reads when the context lacks its attribute.
    private static func defaultAttribute(
        _ slot: AttributeSlot,
        context: EvaluationContext,
        now: Date
    )
        -> AttributeValue?
    {
        switch slot.element {
        case .dateTime?: return .date(now)
        case .appFirebaseInstallationId?: return context.randomizationId.map(AttributeValue.string)
        default: return nil
        }
    }
}

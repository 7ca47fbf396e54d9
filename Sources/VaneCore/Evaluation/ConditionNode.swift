/// A condition tree ready to evaluate: attribute tests pre-compiled, percent seeds numbered.
indirect enum ConditionNode: Sendable {
    case constant(Bool)
    case and([ConditionNode])
    case or([ConditionNode])
    case not(ConditionNode)
    case percent(seedIndex: Int, range: PercentRange)
    case attribute(slot: Int, test: CompiledAttributeTest)

    init(
        _ expression: ConditionExpression,
        seedIndex: (String) -> Int,
        attributeSlot: (String, ConditionElement?) -> Int
    ) {
        switch expression {
        case .constant(let value):
            self = .constant(value)
        case .and(let operands):
            self = .and(operands.map { ConditionNode($0, seedIndex: seedIndex, attributeSlot: attributeSlot) })
        case .or(let operands):
            self = .or(operands.map { ConditionNode($0, seedIndex: seedIndex, attributeSlot: attributeSlot) })
        case .not(let operand):
            self = .not(ConditionNode(operand, seedIndex: seedIndex, attributeSlot: attributeSlot))
        case .percent(let percent):
            self = .percent(seedIndex: seedIndex(percent.seed), range: percent.range)
        case .attribute(let condition):
            var element: ConditionElement?
            if case .element(let named) = condition.subject { element = named }
            self = .attribute(
                slot: attributeSlot(condition.attributeName, element),
                test: CompiledAttributeTest(condition.test)
            )
        }
    }

    /// Calls `body` with the slot and test of every attribute rule in the tree.
    func forEachAttributeTest(_ body: (_ slot: Int, _ test: CompiledAttributeTest) -> Void) {
        switch self {
        case .constant, .percent: return
        case .and(let operands), .or(let operands):
            for operand in operands { operand.forEachAttributeTest(body) }
        case .not(let operand): operand.forEachAttributeTest(body)
        case .attribute(let slot, let test): body(slot, test)
        }
    }

    func evaluate(_ state: inout EvaluationState, template: CompiledTemplate) -> Bool {
        switch self {
        case .constant(let value):
            return value
        case .and(let operands):
            for operand in operands where !operand.evaluate(&state, template: template) { return false }
            return true
        case .or(let operands):
            for operand in operands where operand.evaluate(&state, template: template) { return true }
            return false
        case .not(let operand):
            return !operand.evaluate(&state, template: template)
        case .percent(let seedIndex, let range):
            // No randomization id: nobody is in any percentage.
            guard let id = state.context.randomizationId, !id.isEmpty else { return false }
            var bucket = state.buckets[seedIndex]
            if bucket == .max {
                bucket = PercentBucket.microPercentile(
                    seedPrefix: template.seedPrefixes[seedIndex],
                    randomizationId: id
                )
                state.buckets[seedIndex] = bucket
            }
            return range.contains(microPercentile: bucket)
        case .attribute(let slot, let test):
            guard state.loadAttribute(slot, from: template.attributeSlots) else { return false }
            return test.evaluate(state.slotValues[slot])
        }
    }
}

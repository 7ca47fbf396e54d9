import Testing

/// Whether `actual` is within `relative` × |expected| + `absolute` of `expected` (both infinite
/// with the same sign also counts).
func isClose(_ actual: Double, _ expected: Double, relative: Double = 1e-6, absolute: Double = 1e-12) -> Bool {
    if actual == expected { return true }
    return abs(actual - expected) <= relative * abs(expected) + absolute
}

/// Records an issue naming `what` when `actual` is not close to `expected`.
func expectClose(
    _ actual: Double?,
    _ expected: Double,
    _ what: @autoclosure () -> String,
    relative: Double = 1e-6,
    absolute: Double = 1e-12,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let actual else {
        Issue.record("\(what()): missing, expected \(expected)", sourceLocation: sourceLocation)
        return
    }
    #expect(
        isClose(actual, expected, relative: relative, absolute: absolute),
        "\(what()): \(actual), expected \(expected) (difference \(actual - expected))",
        sourceLocation: sourceLocation
    )
}

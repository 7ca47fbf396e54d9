import FuzzSupport
import VaneAuthoring
import VaneCore

runFuzzer(fuzzStructuredCondition)

/// StructuredConditionReader on any JSON (it never throws); the tree it reads prints as Vane text
/// that, when it parses, prints the same again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStructuredCondition(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let json = try? JSONValue.parse(fuzzInput(data, size)) else { return 0 }
    let (expression, issues) = StructuredConditionReader.read(json)
    _ = issues.map(\.description)
    _ = expression.firebaseIncompatibilities
    let printed = expression.expressionText
    // A numeric target that is no number prints quoted, which the parser rightly refuses.
    guard let reparsed = try? ConditionParser.parse(printed) else { return 0 }
    require(reparsed.expressionText == printed, "\(printed) parses and prints as \(reparsed.expressionText)")
    return 0
}

import FuzzSupport
import VaneAuthoring
import VaneCore

runFuzzer(fuzzCondition)

/// ConditionParser on any text; a condition it reads prints as Vane text that parses to the same
/// tree, and its Firebase text, when it has one, parses too (Vane's language contains Firebase's).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCondition(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzInput(data, size), as: UTF8.self)
    guard let expression = try? ConditionParser.parse(text) else { return 0 }
    let printed = expression.expressionText
    do {
        let reparsed = try ConditionParser.parse(printed)
        require(reparsed == expression, "\(text) prints as \(printed), which parses to another tree")
    } catch {
        require(false, "\(text) prints as \(printed), which does not parse: \(error)")
    }
    if case .success(let firebase) = expression.firebaseExpression() {
        do {
            _ = try ConditionParser.parse(firebase)
        } catch {
            require(false, "\(text) has the Firebase text \(firebase), which does not parse: \(error)")
        }
    }
    return 0
}

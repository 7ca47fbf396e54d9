import Testing
import VaneCore

@testable import VaneServer

/// The value mapping on its own: publishing rejects values that do not fit their type, so a
/// mismatch can only be shown here. No database is involved.
@Suite(.timeLimit(.minutes(5))) struct OFREPValueTests {
    @Test func valuesMapToTheirDeclaredJSONType() {
        #expect(OFREPEvaluation.value("on", type: .boolean) == .bool(true))
        #expect(OFREPEvaluation.value("25", type: .number)?.numberValue?.text == "25")
        #expect(OFREPEvaluation.value("1e3", type: .number)?.numberValue?.text == "1000")
        #expect(OFREPEvaluation.value("-0.25", type: .number)?.numberValue?.text == "-0.25")
        #expect(OFREPEvaluation.value("[1, 2]", type: .json) == [1, 2])
        #expect(OFREPEvaluation.value("42", type: .string) == "42")
        #expect(OFREPEvaluation.value("42", type: .unspecified) == "42")
    }

    @Test func valuesThatDoNotFitTheirTypeAreNotServed() {
        #expect(OFREPEvaluation.value("maybe", type: .boolean) == nil)
        #expect(OFREPEvaluation.value("ten", type: .number) == nil)
        #expect(OFREPEvaluation.value("{broken", type: .json) == nil)
        #expect(OFREPEvaluation.value("7", type: .json) == nil, "OFREP objects are objects (Vane: or arrays)")
    }
}

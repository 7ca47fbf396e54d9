import Testing

@testable import VaneCore

@Suite struct JSONNumberTests {
    @Test func keepsTextOfValidNumbers() {
        for text in ["0", "-0", "12", "-3.25", "1e9", "2E-7", "20000000"] {
            #expect(JSONNumber(text: text)?.text == text)
        }
    }

    @Test func rejectsInvalidNumberSyntax() {
        for text in ["", "-", "01", "1.", ".5", "+1", "1e", "0x10", "NaN", "Infinity", "1_000"] {
            #expect(JSONNumber(text: text) == nil, "\(text) should not be a JSON number")
        }
    }
}

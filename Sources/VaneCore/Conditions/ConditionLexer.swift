/// One token of a condition expression.
struct ConditionToken: Equatable {
    enum Kind: Equatable {
        /// A name such as `app`, `version`, `percent`, `in`.
        case identifier(String)
        /// A single-quoted string, escapes resolved.
        case string(String)
        /// `[-+]?digits(.digits)?`, as written.
        case number(String)
        /// Punctuation or an operator: `.`, `(`, `)`, `[`, `]`, `,`, `==`, `!=`, `<`, `<=`, `>`, `>=`,
        /// `&&`, `||`, `!`.
        case symbol(String)
        /// A character that starts no token.
        case unknown(Character)
        /// The end of the expression.
        case end
    }

    var kind: Kind
    /// 1-based column of the first character.
    var column: Int
    /// The source text, for error messages.
    var text: String

    /// How an error message shows this token.
    var foundDescription: String {
        switch kind {
        case .end: return "the end of the condition"
        case .string: return Self.shortened(text)
        default: return "\"\(Self.shortened(text))\""
        }
    }

    private static func shortened(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(40)) + "…" : text
    }
}

/// Splits an expression into tokens on demand, so errors come out in reading order.
struct ConditionLexer {
    private let characters: [Character]
    private var index = 0

    init(_ expression: String) {
        characters = Array(expression)
    }

    /// Column just past the last character.
    var endColumn: Int { characters.count + 1 }

    /// The next token, or a syntax problem inside a string literal.
    mutating func next() throws(ConditionParseFailure) -> ConditionToken {
        skipWhitespace()
        guard index < characters.count else { return ConditionToken(kind: .end, column: endColumn, text: "") }
        let start = index
        let character = characters[index]
        if character == "'" { return try string() }
        if isIdentifierStart(character) {
            while index < characters.count, isIdentifierPart(characters[index]) { index += 1 }
            return token(.identifier(text(from: start)), from: start)
        }
        if isDigitCharacter(character) || ((character == "-" || character == "+") && isDigit(at: index + 1)) {
            return number()
        }
        for symbol in ["==", "!=", "<=", ">=", "&&", "||"] where matches(symbol) {
            index += 2
            return token(.symbol(symbol), from: start)
        }
        index += 1
        if ".()[],<>!".contains(character) { return token(.symbol(String(character)), from: start) }
        return token(.unknown(character), from: start)
    }

    private mutating func skipWhitespace() {
        while index < characters.count, characters[index].isWhitespace { index += 1 }
    }

    private func matches(_ symbol: String) -> Bool {
        var position = index
        for character in symbol {
            guard position < characters.count, characters[position] == character else { return false }
            position += 1
        }
        return true
    }

    private mutating func number() -> ConditionToken {
        let start = index
        index += 1
        while isDigit(at: index) { index += 1 }
        // A fraction only when a digit follows the dot; `1.x` is the number 1 then `.`.
        if index < characters.count, characters[index] == ".", isDigit(at: index + 1) {
            index += 1
            while isDigit(at: index) { index += 1 }
        }
        return token(.number(text(from: start)), from: start)
    }

    /// Reads `'…'`, resolving the Vane escapes `\'` and `\\`.
    private mutating func string() throws(ConditionParseFailure) -> ConditionToken {
        let start = index
        index += 1
        var value = ""
        while index < characters.count {
            let character = characters[index]
            if character == "'" {
                index += 1
                return token(.string(value), from: start)
            }
            if character == "\\" {
                guard index + 1 < characters.count else { break }
                let escaped = characters[index + 1]
                guard escaped == "'" || escaped == "\\" else {
                    throw ConditionParseFailure(
                        column: index + 1,
                        expected: "\\' or \\\\ (the only escapes inside a string)",
                        found: "\"\\\(escaped)\""
                    )
                }
                value.append(escaped)
                index += 2
                continue
            }
            value.append(character)
            index += 1
        }
        throw ConditionParseFailure(
            column: endColumn,
            expected: "a single quote (') to close the string that starts at column \(start + 1)",
            found: "the end of the condition"
        )
    }

    private func token(_ kind: ConditionToken.Kind, from start: Int) -> ConditionToken {
        ConditionToken(kind: kind, column: start + 1, text: text(from: start))
    }

    private func text(from start: Int) -> String { String(characters[start..<index]) }

    private func isDigit(at position: Int) -> Bool {
        position < characters.count && isDigitCharacter(characters[position])
    }
}

/// A syntax problem before the parser adds the condition name and expression.
struct ConditionParseFailure: Error {
    var column: Int
    var expected: String
    var found: String
}

private func isDigitCharacter(_ character: Character) -> Bool {
    character.isASCII && character.isNumber
}

private func isIdentifierStart(_ character: Character) -> Bool {
    character == "_" || (character.isASCII && character.isLetter)
}

private func isIdentifierPart(_ character: Character) -> Bool {
    isIdentifierStart(character) || isDigitCharacter(character)
}

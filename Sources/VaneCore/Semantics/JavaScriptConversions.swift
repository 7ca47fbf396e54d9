import Foundation

/// JavaScript's conversions between strings and numbers, exactly as ECMAScript defines them.
///
/// Firebase's Node Admin SDK reads custom signals through `Number(x)` and `String(x)`; Vane applies
/// the same conversions so that a template evaluates alike on Vane and on Firebase.
enum JavaScript {
    /// JavaScript `Number(text)`: the number a string denotes, or NaN.
    ///
    /// White space (JavaScript's set, including NBSP, BOM, U+2028/2029 and Unicode `Zs`) is trimmed;
    /// an empty or all-space string is 0. Accepted: `0x`/`0o`/`0b` integers (unsigned), a signed
    /// `Infinity`, and signed decimals with optional fraction and exponent (`5.`, `.5`, `1e3`).
    /// Anything else (`1_000`, `1,000`, `5px`, `inf`) is NaN.
    static func number(from text: String) -> Double {
        if let value = text.utf8.withContiguousStorageIfAvailable(number(utf8:)) { return value }
        var copy = text
        return copy.withUTF8(number(utf8:))
    }

    /// JavaScript `Number(text)` on a slice; see ``number(from:)-(String)``.
    static func number(from text: Substring) -> Double {
        if let value = text.utf8.withContiguousStorageIfAvailable(number(utf8:)) { return value }
        // Only non-native (bridged) strings get here; copy once into contiguous storage.
        var copy = String(text)
        return copy.withUTF8(number(utf8:))
    }

    /// JavaScript `Number(text)` on UTF-8 bytes, the form the evaluator works on.
    static func number(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Double {
        // The usual case, a version segment or a count: 1–15 ASCII digits are exactly their
        // integer value (below 2^53), without trimming or the general scanner.
        if !bytes.isEmpty, bytes.count <= 15 {
            var value: UInt64 = 0
            var digits = 0
            for byte in bytes {
                let digit = byte &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                value = value &* 10 &+ UInt64(digit)
                digits += 1
            }
            if digits == bytes.count { return Double(value) }
        }
        let range = UTF8Bytes.trimmedRange(bytes)
        if range.isEmpty { return 0 }
        return NumberScanner.number(in: UnsafeBufferPointer(rebasing: bytes[range]))
    }

    /// JavaScript `String(number)`: ECMAScript's `Number::toString`.
    ///
    /// The shortest digits that round-trip; integral values have no `.0` (`5.0` is `"5"`); exponent
    /// form from `1e+21` upward and below `1e-6` (`1e-7`); `-0` is `"0"`; `NaN`, `Infinity`, `-Infinity`.
    static func string(from number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number == 0 { return "0" }
        if number < 0 { return "-" + string(from: -number) }
        if number.isInfinite { return "Infinity" }
        // Fast path: integers below 2^53 print the same in Swift's Int64 and in JavaScript.
        if number < 9_007_199_254_740_992, number.rounded(.towardZero) == number {
            return String(Int64(number))
        }
        let (digits, pointPosition) = shortestDigits(of: number)
        return formatECMAScript(digits: digits, pointPosition: pointPosition)
    }

    /// Whether a scalar is JavaScript white space or a line terminator (what `trim()` removes).
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
            return true
        default:
            return false
        }
    }

    /// JavaScript `String.prototype.trim()`.
    static func trimmingWhitespace(_ text: String) -> String {
        UTF8Bytes.with(text) { bytes in
            String(decoding: UnsafeBufferPointer(rebasing: bytes[UTF8Bytes.trimmedRange(bytes)]), as: UTF8.self)
        }
    }

    /// The decimal digits (ASCII, no leading or trailing zeros) of a positive finite number and
    /// the position of the decimal point: the number is `0.d1d2… × 10^pointPosition`.
    ///
    /// Swift's `description` prints the shortest digits that round-trip (closest when several),
    /// as ECMAScript requires; only its layout differs (`5.0`, `1e-07`, `1.5e+20`).
    private static func shortestDigits(of number: Double) -> (digits: [UInt8], pointPosition: Int) {
        var digits: [UInt8] = []
        digits.reserveCapacity(17)
        var integerDigitCount = 0
        var seenPoint = false
        var exponent = 0
        var exponentNegative = false
        var inExponent = false
        for byte in number.description.utf8 {
            switch byte {
            case UInt8(ascii: "e"), UInt8(ascii: "E"): inExponent = true
            case UInt8(ascii: "."): seenPoint = true
            case UInt8(ascii: "-") where inExponent: exponentNegative = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if inExponent {
                    exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
                } else {
                    digits.append(byte)
                    if !seenPoint { integerDigitCount += 1 }
                }
            default: break
            }
        }
        var pointPosition = integerDigitCount + (exponentNegative ? -exponent : exponent)
        let firstSignificant = digits.firstIndex { $0 != UInt8(ascii: "0") } ?? digits.count
        pointPosition -= firstSignificant
        let lastSignificant = digits.lastIndex { $0 != UInt8(ascii: "0") } ?? 0
        let significant = firstSignificant <= lastSignificant ? Array(digits[firstSignificant...lastSignificant]) : []
        return (significant, pointPosition)
    }

    /// ECMAScript `Number::toString(10)` step 5 onward: lays out digits `s` (k of them) with the
    /// decimal point at `n`.
    private static func formatECMAScript(digits: [UInt8], pointPosition n: Int) -> String {
        let k = digits.count
        var out: [UInt8] = []
        out.reserveCapacity(k + 8)
        let zero = UInt8(ascii: "0")
        if k <= n, n <= 21 {
            out += digits
            out += repeatElement(zero, count: n - k)
        } else if 0 < n, n <= 21 {
            out += digits[0..<n]
            out.append(UInt8(ascii: "."))
            out += digits[n...]
        } else if -6 < n, n <= 0 {
            out += [zero, UInt8(ascii: ".")]
            out += repeatElement(zero, count: -n)
            out += digits
        } else {
            out.append(digits[0])
            if k > 1 {
                out.append(UInt8(ascii: "."))
                out += digits[1...]
            }
            out.append(UInt8(ascii: "e"))
            out.append(n - 1 >= 0 ? UInt8(ascii: "+") : UInt8(ascii: "-"))
            out += String(abs(n - 1)).utf8
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The grammar of ECMAScript's `StringNumericLiteral`, over trimmed, non-empty UTF-8.
private enum NumberScanner {
    /// Exact powers of ten representable in a Double (10^0 … 10^22).
    static let exactPowersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    static func number(in bytes: UnsafeBufferPointer<UInt8>) -> Double {
        if bytes.count > 2, bytes[0] == UInt8(ascii: "0") {
            switch bytes[1] | 0x20 {
            case UInt8(ascii: "x"): return radixInteger(bytes, bitsPerDigit: 4)
            case UInt8(ascii: "o"): return radixInteger(bytes, bitsPerDigit: 3)
            case UInt8(ascii: "b"): return radixInteger(bytes, bitsPerDigit: 1)
            default: break
            }
        }
        return decimal(bytes)
    }

    /// The value of a hex digit, or nil.
    private static func digitValue(_ byte: UInt8) -> UInt64? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt64(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt64(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt64(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// `0x…`, `0o…`, `0b…` after the two-byte prefix, correctly rounded however long.
    ///
    /// Keeps the top 64 bits and ORs every dropped bit into bit 0 ("round to odd"), so the final
    /// `Double(UInt64)` rounds to nearest-even exactly as if all bits were present.
    private static func radixInteger(_ bytes: UnsafeBufferPointer<UInt8>, bitsPerDigit: Int) -> Double {
        let radix = UInt64(1) << UInt64(bitsPerDigit)
        var accumulator: UInt64 = 0
        var droppedBits = 0
        var sticky = false
        for byte in bytes[2...] {
            guard let digit = digitValue(byte), digit < radix else { return .nan }
            let room = accumulator.leadingZeroBitCount
            if room >= bitsPerDigit {
                accumulator = accumulator << UInt64(bitsPerDigit) | digit
            } else {
                let spill = bitsPerDigit - room
                if room > 0 { accumulator = accumulator << UInt64(room) }
                accumulator |= digit >> UInt64(spill)
                sticky = sticky || digit & ((1 << UInt64(spill)) - 1) != 0
                droppedBits += spill
            }
        }
        if sticky { accumulator |= 1 }
        return Double(sign: .plus, exponent: droppedBits, significand: Double(accumulator))
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    /// `[+-]? (Infinity | digits [. digits?] | . digits) ([eE] [+-]? digits)?`
    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Double {
        var index = 0
        let count = bytes.count
        var negative = false
        if bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-") {
            negative = bytes[0] == UInt8(ascii: "-")
            index = 1
        }
        if index < count, bytes[index] == UInt8(ascii: "I") {
            return isInfinity(bytes, from: index) ? (negative ? -.infinity : .infinity) : .nan
        }
        // Up to 19 significant digits fit a UInt64; more send us to the slow path.
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var decimalExponent = 0
        var sawDigit = false
        var exact = true
        while index < count, isDigit(bytes[index]) {
            accumulate(bytes[index], &mantissa, &significantDigits, &exact)
            if !exact { decimalExponent += 1 }
            sawDigit = true
            index += 1
        }
        if index < count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < count, isDigit(bytes[index]) {
                accumulate(bytes[index], &mantissa, &significantDigits, &exact)
                if exact { decimalExponent -= 1 }
                sawDigit = true
                index += 1
            }
        }
        guard sawDigit else { return .nan }
        if index < count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            var exponentNegative = false
            if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var exponent = 0
            var sawExponentDigit = false
            while index < count, isDigit(bytes[index]) {
                // Saturate: anything this large is already 0 or Infinity.
                exponent = min(exponent * 10 + Int(bytes[index] - UInt8(ascii: "0")), 1_000_000)
                sawExponentDigit = true
                index += 1
            }
            guard sawExponentDigit else { return .nan }
            decimalExponent += exponentNegative ? -exponent : exponent
        }
        guard index == count else { return .nan }
        let magnitude: Double
        if mantissa == 0 {
            magnitude = 0
        } else if exact, mantissa <= 1 << 53, abs(decimalExponent) <= 22 {
            // Clinger's fast path: one correctly rounded operation on two exact operands.
            let scale = exactPowersOfTen[abs(decimalExponent)]
            magnitude = decimalExponent < 0 ? Double(mantissa) / scale : Double(mantissa) * scale
        } else {
            // The text is valid for Swift's correctly rounded parser too (checked above).
            return Double(String(decoding: bytes, as: UTF8.self)) ?? .nan
        }
        return negative ? -magnitude : magnitude
    }

    private static func accumulate(
        _ byte: UInt8,
        _ mantissa: inout UInt64,
        _ significantDigits: inout Int,
        _ exact: inout Bool
    ) {
        let digit = UInt64(byte - UInt8(ascii: "0"))
        if mantissa == 0 && digit == 0 { return }
        if significantDigits < 19 {
            mantissa = mantissa * 10 + digit
            significantDigits += 1
        } else {
            exact = false
        }
    }

    private static func isInfinity(_ bytes: UnsafeBufferPointer<UInt8>, from index: Int) -> Bool {
        let word = "Infinity".utf8
        guard bytes.count - index == word.count else { return false }
        return zip(bytes[index...], word).allSatisfy { $0 == $1 }
    }
}

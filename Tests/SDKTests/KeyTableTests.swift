import Testing

@testable import Vane

/// The SDK's read table (issue #32) finds exactly what a `Dictionary<String, …>` finds: by
/// String's equality, which is canonical equivalence, not bytes.
@Suite struct KeyTableTests {
    @Test func itFindsWhatADictionaryFindsAsItGrows() {
        // Short (inline) and long (heap) keys, a shared prefix, lengths around the 8-byte step.
        let keys = (0..<3000).map { index in
            switch index % 4 {
            case 0: "key_\(index)"
            case 1: "a_much_longer_key_name_for_the_checkout_flow_\(index)"
            case 2: String(repeating: "x", count: index % 17 + 1) + "\(index)"
            default: "k\(index)"
            }
        }
        var table = KeyTable<Int>()
        var dictionary: [String: Int] = [:]
        for (index, key) in keys.enumerated() {
            table.set(index, forKey: key)
            dictionary[key] = index
        }
        #expect(table.count == dictionary.count)
        for key in keys { #expect(table[key] == dictionary[key], "\(key)") }
        for missing in ["", "key_", "key_3000", "k", "a_much_longer_key_name_for_the_checkout_flow_"] {
            #expect(table[missing] == nil, "\(missing)")
        }
        let position = table.position(of: "key_8")
        table.set(-1, forKey: "key_8")
        #expect(table.position(of: "key_8") == position, "a key set again keeps its place")
        #expect(table["key_8"] == -1)
        #expect(table.count == keys.count)
    }

    /// A table made from a list of keys (an SDK start from the cache) finds what one set key by
    /// key finds, also when a key repeats (its last value counts) or is not ASCII.
    @Test func aTableMadeFromAListFindsWhatOneSetKeyByKeyFinds() {
        let lists = [
            ["a", "b", "c"], ["a", "b", "a"], ["caf\u{E9}", "cafe\u{301}", "x"], ["\u{212A}ey", "Key"],
            (0..<3000).map { "key_\($0)" },
        ]
        for keys in lists {
            let values = Array(keys.indices)
            let made = KeyTable(keys: keys, values: values)
            var set = KeyTable<Int>()
            for (key, value) in zip(keys, values) { set.set(value, forKey: key) }
            #expect(made.count == set.count)
            for key in keys + ["missing", "cafe", "key_3000"] { #expect(made[key] == set[key], "\(key)") }
        }
    }

    @Test func keysAreEqualAsStringsAreNotAsBytes() {
        let composed = "caf\u{E9}"  // é as one scalar
        let decomposed = "cafe\u{301}"  // e and a combining accent
        let kelvin = "\u{212A}ey"  // KELVIN SIGN is canonically "K"
        var table = KeyTable<String>()
        table.set("composed", forKey: composed)
        table.set("ascii", forKey: "Key")
        #expect(table[decomposed] == "composed")
        #expect(table[kelvin] == "ascii", "a non-ASCII spelling of an ASCII key")
        table.set("kelvin", forKey: kelvin)
        #expect(table.count == 2, "the same key, as in a Dictionary")
        #expect(table["Key"] == "kelvin")

        var reversed = KeyTable<String>()
        reversed.set("kelvin", forKey: kelvin)
        #expect(reversed["Key"] == "kelvin", "an ASCII spelling of a non-ASCII key")
        #expect(reversed["key"] == nil)
        let dictionary = [kelvin: "kelvin"]
        #expect(dictionary["Key"] == reversed["Key"])
    }

    /// Stored keys are compared by bytes (a word at a time, the last one overlapping): every byte
    /// of keys of 0 to 24 bytes counts, and so does the length.
    @Test func storedKeysAreComparedByEveryByte() {
        for count in 0...24 {
            let key = (0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            key.withUnsafeBytes { key in
                #expect(KeyIndex.equal(key, key), "\(count) bytes")
            }
            for changed in 0..<count {
                var other = key
                other[changed] ^= 0x20
                let equal = key.withUnsafeBytes { key in other.withUnsafeBytes { KeyIndex.equal(key, $0) } }
                #expect(!equal, "\(count) bytes, byte \(changed) differs")
            }
            let longer = key + [UInt8(ascii: "z")]
            let equal = key.withUnsafeBytes { key in longer.withUnsafeBytes { KeyIndex.equal(key, $0) } }
            #expect(!equal, "\(count) bytes and one more")
        }
    }
}

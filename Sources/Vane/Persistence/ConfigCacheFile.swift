import Foundation
import VaneCore

/// What the client keeps between launches in one file: the active config and the fetched config
/// waiting for `activate()`, each with its ETag and template version.
///
/// They are written together in a single atomic replace (see ``AtomicFile``), so a crash, a full
/// disk or a restored backup can never leave an ETag beside values it does not describe — the
/// Firebase failure where a device keeps sending an ETag for a cache it no longer has and the
/// server keeps answering "not modified".
///
/// The format is binary because startup reads it synchronously on the main thread, and a start
/// reads as little of it as it can: it checks the checksum and every length, offset and reading,
/// hashes each key into the read table, and leaves the keys and values in the file's bytes; a
/// value becomes a String when its key is first read (``StoredEntries``). Each value's typed
/// readings are stored beside it (``CoercedValue``; they are worked out when the values arrive,
/// off the main thread), so a start does not read the values. A 64-bit checksum over the payload
/// catches a damaged file, which is then ignored like a missing one.
///
/// ```
/// "VNC3" · u64 checksum · payload
/// payload: config? (active) · config? (fetched)         config? = u8 0 | u8 1 · config
/// config:  i64 templateVersion · f64 fetchedAt · string? etag · string context
///          · u32 n · n × (string key · string value · readings)
///          · u32 m · m × (string key · string metadataJSON)
/// readings: u8 r (1: a Boolean, 2: true, 4: a number, 8: an integer)
///           · f64 number if r has 4 · i64 integer if r has 8
/// string:  u32 byteCount · UTF-8 bytes                string? = u32 0xFFFFFFFF | string
/// ```
/// Integers are little-endian. The checksum is ``ByteHash`` (eight bytes a step). An ASCII key
/// that repeats within a config makes the file unreadable (keys that are not ASCII are not
/// compared at start: see ``KeyIndex``). Two earlier formats are still read, and the next write
/// replaces them: `"VNC2"`, the same without the readings (the values are made and read at
/// start), and `"VNC1"`, that under a byte-at-a-time FNV-1a checksum. A change to the coercion
/// rule must change the magic, so that readings stored under the old rule are not used
/// (`ClientCacheTests.storedReadingsFollowTheCoercionRule` fails until it does).
struct ConfigCacheFile: Sendable, Hashable {
    static let magic: [UInt8] = Array("VNC3".utf8)
    /// The second format's magic: the same payload without the readings.
    static let unreadMagic: [UInt8] = Array("VNC2".utf8)
    /// The first format's magic: the second's payload under an FNV-1a checksum.
    static let fnvMagic: [UInt8] = Array("VNC1".utf8)

    var active: FetchedConfig?
    var fetched: FetchedConfig?

    init(active: FetchedConfig?, fetched: FetchedConfig?) {
        self.active = active
        self.fetched = fetched
    }

    /// The whole file.
    func serialized() -> [UInt8] {
        var payload = CacheWriter()
        payload.write(active)
        payload.write(fetched)
        var file = Self.magic
        file.reserveCapacity(payload.bytes.count + 12)
        CacheWriter.append(Self.checksum(payload.bytes[...]), to: &file)
        file.append(contentsOf: payload.bytes)
        return file
    }

    /// Reads a file written by ``serialized()`` (or in an earlier format).
    /// - Throws: ``CacheFileError`` saying what is wrong and at which byte.
    init(data: [UInt8]) throws(CacheFileError) {
        let magic = data.count >= 12 ? Array(data[0..<4]) : []
        let format: CacheReader.Format
        switch magic {
        case Self.magic: format = .stored
        case Self.unreadMagic, Self.fnvMagic: format = .unread
        default:
            throw CacheFileError(
                path: "byte 0",
                message: "not a Vane cache file (expected \"VNC3\", \"VNC2\" or \"VNC1\")"
            )
        }
        // Keys are found by 32-bit offsets into the file.
        guard UInt64(data.count) <= UInt64(UInt32.max) else {
            throw CacheFileError(
                path: "byte 0",
                message: "the file is larger than 4 GiB: not a cache this client wrote"
            )
        }
        let read = data.withUnsafeBytes { bytes in
            Result { () throws(CacheFileError) -> (FetchedConfig?, FetchedConfig?) in
                var reader = CacheReader(file: data, bytes: bytes, position: 4, format: format)
                let expected = try reader.uint64()
                let payload = UnsafeRawBufferPointer(rebasing: bytes[12...])
                let actual = magic == Self.fnvMagic ? Self.fnvChecksum(payload) : ByteHash.hash(payload).hash
                guard actual == expected else {
                    throw CacheFileError(path: "byte 4", message: "the checksum does not match: the file is damaged")
                }
                let configs = (try reader.config(), try reader.config())
                guard reader.position == bytes.count else {
                    throw CacheFileError(
                        path: "byte \(reader.position)",
                        message: "unexpected bytes after the last config"
                    )
                }
                return configs
            }
        }
        (active, fetched) = try read.get()
    }

    /// The checksum of a `"VNC3"` or `"VNC2"` file's payload.
    static func checksum(_ payload: ArraySlice<UInt8>) -> UInt64 {
        payload.withUnsafeBytes { ByteHash.hash($0).hash }
    }

    /// The checksum of a `"VNC1"` file's payload: FNV-1a, 64 bits.
    static func fnvChecksum(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}

/// The bits of an entry's `r` byte (``ConfigCacheFile``).
enum ReadingFlags {
    /// The value reads as a Boolean.
    static let bool: UInt8 = 0b1
    /// That Boolean is true.
    static let isTrue: UInt8 = 0b10
    /// The value reads as a number (an `f64` follows).
    static let number: UInt8 = 0b100
    /// The value reads as an integer (an `i64` follows).
    static let integer: UInt8 = 0b1000
}

/// Appends the cache format's parts.
private struct CacheWriter {
    var bytes: [UInt8] = []

    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func write(_ value: UInt64) { Self.append(value, to: &bytes) }

    mutating func write(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func write(_ string: String) {
        let utf8 = string.utf8
        write(UInt32(truncatingIfNeeded: utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func write(optional string: String?) {
        if let string { write(string) } else { write(UInt32.max) }
    }

    /// An entry as ``CacheReader`` reads it back: the key, the value, its readings.
    mutating func write(key: String, value: CoercedValue) {
        write(key)
        write(value.stringValue)
        var flags: UInt8 = 0
        if let bool = value.boolValue { flags |= bool ? ReadingFlags.bool | ReadingFlags.isTrue : ReadingFlags.bool }
        if value.doubleValue != nil { flags |= ReadingFlags.number }
        if value.intValue != nil { flags |= ReadingFlags.integer }
        bytes.append(flags)
        if let double = value.doubleValue { write(double.bitPattern) }
        if let int = value.intValue { write(UInt64(bitPattern: Int64(int))) }
    }

    mutating func write(_ config: FetchedConfig?) {
        guard let config else {
            bytes.append(0)
            return
        }
        bytes.append(1)
        write(UInt64(bitPattern: config.templateVersion))
        write(config.fetchedAt.timeIntervalSince1970.bitPattern)
        write(optional: config.etag)
        write(config.contextText)
        let values = config.values
        write(UInt32(truncatingIfNeeded: values.count))
        for position in 0..<values.count { write(key: values.key(at: position), value: values.value(at: position)) }
        write(UInt32(truncatingIfNeeded: config.metadata.count))
        for (key, metadata) in config.metadata {
            write(key)
            write(JSONValue.object(metadata.json()).serialized())
        }
    }
}

/// Reads the cache format's parts, checking every length against the bytes left.
private struct CacheReader {
    /// How a config's entries are laid out.
    enum Format {
        /// `"VNC3"`: readings after each value; the entries are left in the file (``StoredEntries``).
        case stored
        /// `"VNC2"`, `"VNC1"`: only the values; they are made and read here.
        case unread
    }

    /// The whole file, kept by the configs of a `"VNC3"` file.
    let file: [UInt8]
    /// The same bytes.
    let bytes: UnsafeRawBufferPointer
    var position: Int
    let format: Format

    @inline(__always)
    mutating func take(_ count: Int) throws(CacheFileError) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= bytes.count - position else {
            throw CacheFileError(path: "byte \(position)", message: "the file ends early (wanted \(count) more bytes)")
        }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
    }

    @inline(__always)
    mutating func byte() throws(CacheFileError) -> UInt8 {
        try take(1)[0]
    }

    @inline(__always)
    mutating func uint64() throws(CacheFileError) -> UInt64 {
        UInt64(littleEndian: try take(8).loadUnaligned(as: UInt64.self))
    }

    @inline(__always)
    mutating func uint32() throws(CacheFileError) -> UInt32 {
        UInt32(littleEndian: try take(4).loadUnaligned(as: UInt32.self))
    }

    mutating func string() throws(CacheFileError) -> String {
        let count = try uint32()
        return String(decoding: try take(Int(count)).assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    mutating func optionalString() throws(CacheFileError) -> String? {
        let count = try uint32()
        if count == UInt32.max { return nil }
        return String(decoding: try take(Int(count)).assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    /// Checks a readings byte read at `at`: only these combinations are written (true needs a
    /// Boolean, an integer a number).
    @inline(__always)
    func check(readings flags: UInt8, at: Int) throws(CacheFileError) {
        guard flags & 0b1111_0000 == 0, flags & ReadingFlags.isTrue == 0 || flags & ReadingFlags.bool != 0,
            flags & ReadingFlags.integer == 0 || flags & ReadingFlags.number != 0
        else {
            throw CacheFileError(
                path: "byte \(at)",
                message: "expected the readings of a value (1: a Boolean, 2: true, 4: a number, 8: an integer; "
                    + "true only with a Boolean, an integer only with a number), found \(flags)"
            )
        }
    }

    /// The number and integer that follow a value whose readings are `flags`, checked.
    @inline(__always)
    mutating func numbers(_ flags: UInt8) throws(CacheFileError) {
        if flags & ReadingFlags.number != 0 {
            guard Double(bitPattern: try uint64()).isFinite else {
                throw CacheFileError(path: "byte \(position - 8)", message: "expected a finite number")
            }
        }
        if flags & ReadingFlags.integer != 0 {
            guard Int(exactly: Int64(bitPattern: try uint64())) != nil else {
                throw CacheFileError(path: "byte \(position - 8)", message: "expected an integer that fits in Int")
            }
        }
    }

    /// `count` `"VNC3"` entries, checked, each key hashed into the read table's index, and left in
    /// the file.
    mutating func storedEntries(_ count: Int) throws(CacheFileError) -> ConfigEntries {
        let start = position
        // Each entry takes at least 9 bytes: a damaged count cannot make a huge reservation.
        let capacity = min(count, (bytes.count - position) / 9)
        var spans: [UInt64] = []
        var hashes: [UInt64] = []
        var notASCII: [Int32] = []
        spans.reserveCapacity(capacity)
        hashes.reserveCapacity(capacity)
        for entry in 0..<count {
            let keyCount = Int(try uint32())
            let keyStart = position
            let (hash, orOfWords) = ByteHash.hash(try take(keyCount))
            hashes.append(hash)
            if !ByteHash.isASCII(orOfWords) { notASCII.append(Int32(truncatingIfNeeded: entry)) }
            spans.append(UInt64(keyStart) << 32 | UInt64(keyCount))
            _ = try take(Int(try uint32()))
            let at = position
            let flags = try byte()
            try check(readings: flags, at: at)
            try numbers(flags)
        }
        guard
            let index = KeyIndex(stored: KeyIndex.Stored(bytes: file, spans: spans), hashes: hashes, notASCII: notASCII)
        else {
            throw CacheFileError(path: "byte \(start)", message: "a key repeats among the config's entries")
        }
        return ConfigEntries(stored: StoredEntries(index: index))
    }

    /// `count` entries of an earlier format, made into Strings and values here.
    mutating func madeEntries(_ count: Int) throws(CacheFileError) -> ConfigEntries {
        // Each entry takes at least 8 bytes: a damaged count cannot make a huge reservation.
        let capacity = min(count, (bytes.count - position) / 8)
        var keys: [String] = []
        var values: [CoercedValue] = []
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
        // A key repeated in a damaged file: its last value counts, and the next write has it once.
        var positions: [String: Int] = [:]
        for _ in 0..<count {
            let key = try string()
            let value = CoercedValue(try string())
            if let position = positions[key] {
                values[position] = value
            } else {
                positions[key] = keys.count
                keys.append(key)
                values.append(value)
            }
        }
        return ConfigEntries(keys: keys, values: values)
    }

    mutating func config() throws(CacheFileError) -> FetchedConfig? {
        switch try byte() {
        case 0: return nil
        case 1: break
        default:
            throw CacheFileError(path: "byte \(position - 1)", message: "expected 0 or 1 (config absent or present)")
        }
        let version = Int64(bitPattern: try uint64())
        let fetchedAt = Date(timeIntervalSince1970: Double(bitPattern: try uint64()))
        let etag = try optionalString()
        let context = try string()
        let entryCount = Int(try uint32())
        let values = format == .stored ? try storedEntries(entryCount) : try madeEntries(entryCount)
        let metadataCount = Int(try uint32())
        var metadata: [String: KeyMetadata] = [:]
        for _ in 0..<metadataCount {
            let key = try string()
            let text = try string()
            if case .object(let object)? = try? JSONValue.parse(text) {
                metadata[key] = KeyMetadata(json: object)
            }
        }
        return FetchedConfig(
            values: values,
            metadata: metadata,
            templateVersion: version,
            etag: etag,
            fetchedAt: fetchedAt,
            contextText: context
        )
    }
}

/// A cache or overrides file that cannot be read; the client starts without it and says so in its log.
struct CacheFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where: a byte offset, or a JSON path in the overrides file.
    var path: String
    /// What is wrong there.
    var message: String

    var description: String { "\(path): \(message)" }
}

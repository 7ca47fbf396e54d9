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
/// The format is binary because startup reads it synchronously on the main thread: length-prefixed
/// UTF-8 strings decode several times faster than JSON, and each value's typed readings are
/// stored beside it, so a start does not read every value again (``CoercedValue``; they are
/// worked out when the values arrive, off the main thread). A 64-bit checksum over the payload
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
/// Integers are little-endian. The checksum is ``ByteHash`` (eight bytes a step). Two earlier
/// formats are still read, and the next write replaces them: `"VNC2"`, the same without the
/// readings (the values are read at start), and `"VNC1"`, that under a byte-at-a-time FNV-1a
/// checksum. A change to the coercion rule must change the magic, so that readings stored under
/// the old rule are not used (`ClientCacheTests.storedReadingsFollowTheCoercionRule` fails until
/// it does).
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
        guard magic == Self.magic || magic == Self.unreadMagic || magic == Self.fnvMagic else {
            throw CacheFileError(
                path: "byte 0",
                message: "not a Vane cache file (expected \"VNC3\", \"VNC2\" or \"VNC1\")"
            )
        }
        let read = data.withUnsafeBytes { bytes in
            Result { () throws(CacheFileError) -> (FetchedConfig?, FetchedConfig?) in
                var reader = CacheReader(bytes: bytes, position: 4, hasReadings: magic == Self.magic)
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

    /// What ``CacheReader/readings(of:)`` reads back.
    mutating func write(readingsOf value: CoercedValue) {
        var flags: UInt8 = 0
        if let bool = value.boolValue { flags |= bool ? 0b11 : 0b01 }
        if value.doubleValue != nil { flags |= 0b100 }
        if value.intValue != nil { flags |= 0b1000 }
        bytes.append(flags)
        if let double = value.doubleValue { write(double.bitPattern) }
        if let int = value.intValue { write(UInt64(bitPattern: Int64(int))) }
    }

    mutating func write(optional string: String?) {
        if let string { write(string) } else { write(UInt32.max) }
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
        for (key, value) in zip(values.keys, values.values) {
            write(key)
            write(value.stringValue)
            write(readingsOf: value)
        }
        write(UInt32(truncatingIfNeeded: config.metadata.count))
        for (key, metadata) in config.metadata {
            write(key)
            write(JSONValue.object(metadata.json()).serialized())
        }
    }
}

/// Reads the cache format's parts, checking every length against the bytes left.
private struct CacheReader {
    let bytes: UnsafeRawBufferPointer
    var position: Int
    /// Whether each value has its readings beside it (`"VNC3"`); otherwise they are worked out here.
    let hasReadings: Bool

    mutating func take(_ count: Int) throws(CacheFileError) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= bytes.count - position else {
            throw CacheFileError(path: "byte \(position)", message: "the file ends early (wanted \(count) more bytes)")
        }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
    }

    mutating func byte() throws(CacheFileError) -> UInt8 {
        try take(1)[0]
    }

    mutating func uint64() throws(CacheFileError) -> UInt64 {
        UInt64(littleEndian: try take(8).loadUnaligned(as: UInt64.self))
    }

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

    /// A value with the readings stored beside it, as ``CacheWriter/write(readingsOf:)`` wrote them.
    mutating func readings(of text: String) throws(CacheFileError) -> CoercedValue {
        let at = position
        let flags = try byte()
        // Only these combinations are written: true needs a Boolean, an integer a number.
        guard flags & 0b1111_0000 == 0, flags & 0b10 == 0 || flags & 0b1 != 0, flags & 0b1000 == 0 || flags & 0b100 != 0
        else {
            throw CacheFileError(
                path: "byte \(at)",
                message: "expected the readings of a value (1: a Boolean, 2: true, 4: a number, 8: an integer; "
                    + "true only with a Boolean, an integer only with a number), found \(flags)"
            )
        }
        var double: Double?
        if flags & 0b100 != 0 {
            let number = Double(bitPattern: try uint64())
            guard number.isFinite else {
                throw CacheFileError(path: "byte \(position - 8)", message: "expected a finite number")
            }
            double = number
        }
        var int: Int?
        if flags & 0b1000 != 0 {
            guard let integer = Int(exactly: Int64(bitPattern: try uint64())) else {
                throw CacheFileError(path: "byte \(position - 8)", message: "expected an integer that fits in Int")
            }
            int = integer
        }
        return CoercedValue(
            stringValue: text,
            boolValue: flags & 0b1 != 0 ? flags & 0b10 != 0 : nil,
            doubleValue: double,
            intValue: int
        )
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
        // Each entry takes at least 8 bytes: a damaged count cannot make a huge reservation.
        let capacity = min(entryCount, (bytes.count - position) / 8)
        var keys: [String] = []
        var values: [CoercedValue] = []
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
        for _ in 0..<entryCount {
            keys.append(try string())
            let text = try string()
            values.append(hasReadings ? try readings(of: text) : CoercedValue(text))
        }
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
            values: ConfigEntries(keys: keys, values: values),
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

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
/// UTF-8 strings decode several times faster than JSON. A 64-bit checksum over the payload
/// catches a damaged file, which is then ignored like a missing one.
///
/// ```
/// "VNC2" · u64 checksum · payload
/// payload: config? (active) · config? (fetched)         config? = u8 0 | u8 1 · config
/// config:  i64 templateVersion · f64 fetchedAt · string? etag · string context
///          · u32 n · n × (string key · string value) · u32 m · m × (string key · string metadataJSON)
/// string:  u32 byteCount · UTF-8 bytes                string? = u32 0xFFFFFFFF | string
/// ```
/// Integers are little-endian. The checksum is ``ByteHash`` (eight bytes a step). Files written
/// before it, `"VNC1"`, carry a byte-at-a-time FNV-1a checksum (a tenth of a millisecond at start
/// for 3,000 keys) over the same payload; they are still read, and the next write replaces them.
struct ConfigCacheFile: Sendable, Hashable {
    static let magic: [UInt8] = Array("VNC2".utf8)
    /// The first format's magic: the same payload under an FNV-1a checksum.
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

    /// Reads a file written by ``serialized()``.
    /// - Throws: ``CacheFileError`` saying what is wrong and at which byte.
    init(data: [UInt8]) throws(CacheFileError) {
        let magic = data.count >= 12 ? Array(data[0..<4]) : []
        guard magic == Self.magic || magic == Self.fnvMagic else {
            throw CacheFileError(path: "byte 0", message: "not a Vane cache file (expected \"VNC2\" or \"VNC1\")")
        }
        var reader = CacheReader(bytes: data, position: 4)
        let expected = try reader.uint64()
        let actual = magic == Self.magic ? Self.checksum(data[12...]) : Self.fnvChecksum(data[12...])
        guard actual == expected else {
            throw CacheFileError(path: "byte 4", message: "the checksum does not match: the file is damaged")
        }
        active = try reader.config()
        fetched = try reader.config()
        guard reader.position == data.count else {
            throw CacheFileError(path: "byte \(reader.position)", message: "unexpected bytes after the last config")
        }
    }

    /// The checksum of a `"VNC2"` file's payload.
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
        write(UInt32(truncatingIfNeeded: config.entries.count))
        for (key, value) in config.entries {
            write(key)
            write(value)
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
    let bytes: [UInt8]
    var position: Int

    mutating func take(_ count: Int) throws(CacheFileError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - position else {
            throw CacheFileError(path: "byte \(position)", message: "the file ends early (wanted \(count) more bytes)")
        }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    mutating func uint64() throws(CacheFileError) -> UInt64 {
        var value: UInt64 = 0
        for (index, byte) in try take(8).enumerated() { value |= UInt64(byte) << UInt64(index * 8) }
        return value
    }

    mutating func uint32() throws(CacheFileError) -> UInt32 {
        var value: UInt32 = 0
        for (index, byte) in try take(4).enumerated() { value |= UInt32(byte) << UInt32(index * 8) }
        return value
    }

    mutating func string() throws(CacheFileError) -> String {
        let count = try uint32()
        return String(decoding: try take(Int(count)), as: UTF8.self)
    }

    mutating func optionalString() throws(CacheFileError) -> String? {
        let count = try uint32()
        if count == UInt32.max { return nil }
        return String(decoding: try take(Int(count)), as: UTF8.self)
    }

    mutating func config() throws(CacheFileError) -> FetchedConfig? {
        switch try take(1).first {
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
        var entries: [String: String] = [:]
        entries.reserveCapacity(min(entryCount, bytes.count))
        for _ in 0..<entryCount {
            let key = try string()
            entries[key] = try string()
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
            entries: entries,
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

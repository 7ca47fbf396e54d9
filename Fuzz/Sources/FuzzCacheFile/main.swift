import Foundation
import FuzzSupport
import VaneCore

@testable import Vane

runFuzzer(fuzzCacheFile)

/// ConfigCacheFile(data:) on any bytes. An input that does not start with the magic is framed as
/// a payload with a correct checksum, so the fuzzer explores the reader rather than the checksum.
/// A file it reads starts a read table over its bytes, and writes bytes that read back as the same
/// configs.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCacheFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var bytes = fuzzInput(data, size)
    if !bytes.starts(with: ConfigCacheFile.magic) {
        var framed = ConfigCacheFile.magic
        let checksum = ConfigCacheFile.checksum(bytes[...])
        for shift in stride(from: 0, to: 64, by: 8) {
            framed.append(UInt8(truncatingIfNeeded: checksum >> UInt64(shift)))
        }
        bytes = framed + bytes
    }
    guard let file = try? ConfigCacheFile(data: bytes) else { return 0 }
    // A start over the file's bytes: every key looked up, every value made (a stored hash that is
    // wrong only makes a lookup miss, so what is found is not checked).
    if let active = file.active {
        var resolved = ResolvedValues(overrides: [:], active: active, defaults: InAppDefaults())
        for key in active.entries.keys { _ = resolved[key] }
        resolved.makeAll()
        _ = resolved.keys
    }
    let written = file.serialized()
    do {
        let reread = try ConfigCacheFile(data: written)
        require(same(reread.active, file.active), "the active config reads back differently")
        require(same(reread.fetched, file.fetched), "the fetched config reads back differently")
    } catch {
        require(false, "the written file does not read: \(error)")
    }
    return 0
}

/// Equal configs; `fetchedAt` within a microsecond (Date keeps seconds since 2001, the file since
/// 1970, so a conversion may round) or both not a number (which no Date equals).
private func same(_ left: FetchedConfig?, _ right: FetchedConfig?) -> Bool {
    guard var left, var right else { return left == nil && right == nil }
    let (leftTime, rightTime) = (left.fetchedAt.timeIntervalSince1970, right.fetchedAt.timeIntervalSince1970)
    guard leftTime == rightTime || abs(leftTime - rightTime) < 1e-6 || (leftTime.isNaN && rightTime.isNaN) else {
        return false
    }
    (left.fetchedAt, right.fetchedAt) = (.distantPast, .distantPast)
    return left == right
}

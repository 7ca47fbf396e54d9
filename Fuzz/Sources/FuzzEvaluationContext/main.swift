import FuzzSupport
import VaneCore

runFuzzer(fuzzEvaluationContext)

/// EvaluationContext(json:) on any JSON; a context it reads writes JSON that reads back as the
/// same context.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEvaluationContext(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let json = try? JSONValue.parse(fuzzInput(data, size)),
        let context = try? EvaluationContext(json: json)
    else { return 0 }
    let written = context.json()
    do {
        let reread = try EvaluationContext(json: written)
        require(reread == context, "\(json.serialized()) writes \(written.serialized()), which reads back differently")
    } catch {
        require(false, "\(json.serialized()) writes \(written.serialized()), which does not read: \(error)")
    }
    return 0
}

import Foundation
import VaneCore

/// Reads the files a command names; `-` is standard input.
enum InputFiles {
    static func read(_ path: String) throws(InputError) -> [UInt8] {
        if path == "-" {
            return Array(FileHandle.standardInput.readDataToEndOfFile())
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
                throw InputError(
                    isDirectory.boolValue ? "\(path): is a directory; expected a JSON file" : "\(path): cannot be read"
                )
            }
            throw InputError("\(path): no such file")
        }
        return Array(data)
    }

    static func template(_ path: String) throws(InputError) -> ConfigTemplate {
        let bytes = try read(path)
        do {
            return try ConfigTemplate(data: bytes)
        } catch {
            throw InputError(file: displayName(path), issues: error.issues)
        }
    }

    static func json(_ path: String) throws(InputError) -> JSONValue {
        let bytes = try read(path)
        do {
            return try JSONValue.parse(bytes)
        } catch {
            throw InputError("\(displayName(path)): \(error.description)")
        }
    }

    static func displayName(_ path: String) -> String { path == "-" ? "<stdin>" : path }
}

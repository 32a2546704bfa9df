import Foundation
import HTTPTypes
import HammockWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a `GET` of a file stub asked for with `Range` (RFC 9110 §14): a resumed download's remainder,
/// a video's next segment.
///
/// One range is served as `206 Partial Content`; several ranges, a unit other than `bytes`, a range that
/// cannot be read, or an `If-Range` that no longer matches the file are answered with the whole file
/// (the RFC lets a server ignore `Range`, and a client then sees a 200, never a wrong part). A range past
/// the end is a 416 naming the size.
enum ByteRange: Equatable {
    case whole
    case part(Range<Int>)
    case unsatisfiable

    /// The answer to `range` (and `ifRange`, checked against the file's validators) on a file of `size` bytes.
    static func read(range: String?, ifRange: String?, size: Int, etag: String, lastModified: String) -> ByteRange {
        guard let range else { return .whole }
        if let ifRange {
            let condition = ifRange.trimmingCharacters(in: .whitespaces)
            // An entity tag must match strongly (a weak one never does); a date must be the file's own.
            let matches = condition.hasPrefix("\"") || condition.hasPrefix("W/") ? condition == etag : condition == lastModified
            guard matches else { return .whole }
        }
        let text = range.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes="), text.utf8.count <= 200 else { return .whole }
        let spec = text.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), spec.filter({ $0 == "-" }).count == 1 else { return .whole }
        let parts = spec.split(separator: "-", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let (first, last) = (parts[0], parts[1])
        guard first.allSatisfy(\.isASCIIDigit), last.allSatisfy(\.isASCIIDigit), !(first.isEmpty && last.isEmpty) else {
            return .whole
        }
        if first.isEmpty {
            // The last n bytes; a number past 64 bits asks for all of them.
            let count = Int(last) ?? Int.max
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - count)..<size)
        }
        // A start past 64 bits is past any file's end.
        guard let start = Int(first) else { return .unsatisfiable }
        let end = last.isEmpty ? Int.max : (Int(last) ?? Int.max)
        guard end >= start else { return .whole }
        guard start < size else { return .unsatisfiable }
        return .part(start..<(min(end, size - 1) + 1))
    }

    /// The validators of the file at `path`: its size, an entity tag of its size and modification time,
    /// and that time as an HTTP date; `nil` when it cannot be read.
    static func validators(ofFile path: String) -> (size: Int, etag: String, lastModified: String)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        let seconds = Int(info.st_mtimespec.tv_sec)
        let nanoseconds = Int(info.st_mtimespec.tv_nsec)
        #else
        let seconds = Int(info.st_mtim.tv_sec)
        let nanoseconds = Int(info.st_mtim.tv_nsec)
        #endif
        let size = Int(info.st_size)
        let etag = "\"\(String(size, radix: 16))-\(String(seconds, radix: 16))\(String(nanoseconds, radix: 16))\""
        return (size, etag, HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(seconds))))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

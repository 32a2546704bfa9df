public import Foundation
import HammockWire

/// A response body saved to a file, for methods declared to return one.
///
/// ```swift
/// @GET("/reports/{id}.pdf")
/// func report(id: Int) async throws -> DownloadedFile
///
/// let file = try await api.report(id: 7)
/// try FileManager.default.moveItem(at: file.url, to: destination)
/// ```
/// The file lives in the temporary directory; move it to keep it. The body passes through memory
/// (transports return whole bodies), so this suits files up to the transport's size limit.
public struct DownloadedFile: Sendable, Hashable {
    /// Where the body was written.
    public var url: URL
    /// The response's `Content-Type`, if any.
    public var contentType: String?
    /// The file name the server suggested in `Content-Disposition`, if any.
    public var suggestedFilename: String?
    /// The size in bytes.
    public var byteCount: Int
}

extension RestClient {
    /// Sends `request` and writes a 2xx body to a new temporary file.
    public func download(_ request: RequestBuilder) async throws(RestError) -> DownloadedFile {
        let raw = try await send(request)
        let directory = FileManager.default.temporaryDirectory
        let suggested = raw.headerFields[.contentDisposition].flatMap(Self.filename(fromContentDisposition:))
        let url = directory.appendingPathComponent(Self.diskName(suggested: suggested))
        if let error = await Self.write(raw.body, to: url) {
            throw RestError(
                .saving(error), method: request.method, url: request.describeURL(baseURL: baseURL), status: raw.status,
                headerFields: raw.headerFields, body: nil)
        }
        return DownloadedFile(
            // A repeated Content-Type may arrive joined ("a, a"); a media type never holds a comma.
            url: url,
            contentType: raw.headerFields[.contentType].flatMap { $0.split(separator: ",").first }
                .map { $0.trimmingCharacters(in: .whitespaces) },
            suggestedFilename: suggested,
            byteCount: raw.body.count)
    }

    /// The file's name on disk: `hammock-`, a UUID, and the suggested name cut to fit a file system's
    /// 255-byte name limit (a name past it would lose the download), keeping a short extension.
    static func diskName(suggested: String?) -> String {
        let prefix = "hammock-\(UUID().uuidString)-"
        let budget = 255 - prefix.utf8.count  // 210 bytes
        let name = suggested ?? "download"
        guard name.utf8.count > budget else { return prefix + name }
        let dot = name.lastIndex(of: ".")
        let ext = dot.map { String(name[$0...]) }.flatMap { $0.utf8.count <= 16 ? $0 : nil } ?? ""
        var stem = ""
        for character in name.dropLast(ext.count) {
            guard stem.utf8.count + character.utf8.count + ext.utf8.count <= budget else { break }
            stem.append(character)
        }
        return prefix + stem + ext
    }

    /// Writes `bytes` to a new file at `url`, readable by its owner only (0600: the temporary directory
    /// is shared on Linux), on a queue of its own: a large body would otherwise hold a thread of the
    /// concurrency pool for the whole write. Returns the failure, if any.
    static func write(_ bytes: [UInt8], to url: URL) async -> (any Error)? {
        await withCheckedContinuation { continuation in
            fileQueue.async {
                // O_EXCL: a file someone placed at the name beforehand is never written through.
                continuation.resume(
                    returning: PrivateFile.write(bytes, to: url.path)
                        ? nil : CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path]))
            }
        }
    }

    static let fileQueue = DispatchQueue(label: "hammock.downloads", attributes: .concurrent)

    /// The file name a `Content-Disposition` value suggests: `filename*` (RFC 6266, any language,
    /// UTF-8 or Latin-1) before `filename`, stripped of any directory part.
    static func filename(fromContentDisposition value: String) -> String? {
        let header = HeaderValue(parsing: value)
        guard let name = header.parameter("filename*").flatMap(HeaderValue.extendedValue) ?? header.parameter("filename")
        else { return nil }
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        return last.isEmpty || last == "." || last == ".." ? nil : last
    }
}

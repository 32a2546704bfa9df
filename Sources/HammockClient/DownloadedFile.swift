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
/// The file lives in the temporary directory; move it to keep it. The body is written as it arrives,
/// so a file of any size passes through about a mebibyte of memory.
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
    /// Sends `request` and writes a 2xx body to a new temporary file as it arrives (readable by its
    /// owner only), so a body of any size passes through a mebibyte of memory or so.
    ///
    /// The request's ``RequestBuilder/maximumResponseSize``, if set, bounds the file (a body past
    /// it fails as it arrives and leaves no file); without one, the file is as large as the body.
    /// Progress is reported through ``TransferProgress`` as the bytes reach the file.
    public func download(_ request: RequestBuilder) async throws(RestError) -> DownloadedFile {
        let response = try await stream(request)
        let url = request.describeURL(baseURL: baseURL)
        func failure(_ reason: RestError.Reason) -> RestError {
            RestError(
                reason, method: request.method, url: url, status: response.status, headerFields: response.headerFields, body: nil)
        }
        let suggested = response.headerFields[.contentDisposition].flatMap(Self.filename(fromContentDisposition:))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(Self.diskName(suggested: suggested))
        let expected = response.headerFields[.contentLength].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
        let limit = request.maximumResponseSize ?? .max
        if let expected, expected > limit { throw failure(.transport(BodyStreamError.tooLarge(limit: limit))) }
        let sink: PrivateFile.Sink
        do { sink = try await PrivateFile.Sink.create(at: file.path) } catch { throw failure(.saving(error)) }
        var total = 0
        do {
            TransferProgress.report(.responseHeadReceived(expectedBytes: expected))
            // Chunks gathered to a mebibyte per write: one hop to the file queue per mebibyte, not per
            // network read (16 KiB on URLSession, up to 64 KiB on NIO).
            var pending: [UInt8] = []
            for try await chunk in response.body {
                guard chunk.count <= limit - total else { throw failure(.transport(BodyStreamError.tooLarge(limit: limit))) }
                total += chunk.count
                pending += chunk
                if pending.count >= 1 << 20 {
                    try await sink.write(pending)
                    pending.removeAll(keepingCapacity: true)
                }
                TransferProgress.report(.responseBytesReceived(total: total))
            }
            try await sink.write(pending)
            try await sink.close()
        } catch {
            await sink.discard()
            if let error = error as? RestError { throw error }
            throw failure(.saving(error))
        }
        return DownloadedFile(
            // A repeated Content-Type may arrive joined ("a, a"); a media type never holds a comma.
            url: file,
            contentType: response.headerFields[.contentType].flatMap { $0.split(separator: ",").first }
                .map { $0.trimmingCharacters(in: .whitespaces) },
            suggestedFilename: suggested,
            byteCount: total)
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

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

/// What a download that broke off left on disk, and what the server said of the body: enough to ask for
/// the rest (`Range` from `byteCount`, `If-Range` with the validator) instead of starting again.
///
/// ```swift
/// do {
///     file = try await client.download(request)
/// } catch let error as RestError {
///     guard let partial = error.partialDownload else { throw error }
///     file = try await client.download(request, resuming: partial)     // now, or after a relaunch
/// }
/// ```
/// `Codable`, so an app can keep it across launches beside the file (which lives in the temporary
/// directory: move both together, or resume before the system cleans it).
public struct PartialDownload: Sendable, Hashable, Codable {
    /// The file holding the bytes received so far.
    public var url: URL
    /// How many bytes it holds.
    public var byteCount: Int
    /// The body's strong `ETag`, if the server sent one.
    public var etag: String?
    /// The body's `Last-Modified`, if the server sent one.
    public var lastModified: String?
    /// The response's `Content-Type`, if any.
    public var contentType: String?
    /// The file name the server suggested, if any.
    public var suggestedFilename: String?

    /// A partial download: `byteCount` bytes of a body at `url`, with the body's validators.
    public init(
        url: URL, byteCount: Int, etag: String? = nil, lastModified: String? = nil, contentType: String? = nil,
        suggestedFilename: String? = nil
    ) {
        self.url = url
        self.byteCount = byteCount
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
        self.suggestedFilename = suggestedFilename
    }

    /// What `If-Range` carries: the strong entity tag, else the date.
    var validator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }
}

/// A resumed download's answer does not continue the bytes on disk.
public struct DownloadResumeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `Content-Range` the server answered, if any.
    public var contentRange: String?
    /// How many bytes the file held.
    public var byteCount: Int

    public var description: String {
        "the answer's Content-Range \(contentRange ?? "(none)") does not continue the \(byteCount) bytes on disk"
    }
}

extension RestClient {
    /// Sends `request` and writes a 2xx body to a new temporary file as it arrives (readable by its
    /// owner only), so a body of any size passes through a mebibyte of memory or so.
    ///
    /// The request's ``RequestBuilder/maximumResponseSize``, if set, bounds the file (a body past
    /// it fails as it arrives and leaves no file); without one, the file is as large as the body.
    /// Progress is reported through ``TransferProgress`` as the bytes reach the file.
    ///
    /// A body that breaks off (the connection failed, the task was cancelled) after some bytes arrived
    /// leaves them on disk when the server said it can send the rest (`Accept-Ranges: bytes` and an
    /// `ETag` or `Last-Modified`): the error's ``RestError/partialDownload`` names them, for
    /// ``download(_:resuming:)``. Otherwise nothing is left.
    public func download(_ request: RequestBuilder) async throws(RestError) -> DownloadedFile {
        let response = try await stream(request)
        let suggested = response.headerFields[.contentDisposition].flatMap(Self.filename(fromContentDisposition:))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(Self.diskName(suggested: suggested))
        let sink: PrivateFile.Sink
        do {
            sink = try await PrivateFile.Sink.create(at: file.path)
        } catch {
            throw downloadFailure(.saving(error), request, response)
        }
        return try await receive(response, of: request, into: sink, at: file, after: 0, suggested: suggested)
    }

    /// Asks for the rest of `partial` (`Range` from its byte count, `If-Range` with its validator) and
    /// appends it to its file: a `206` continues the bytes on disk; a `200` (the body changed, or the
    /// server sends whole bodies only) replaces them; a `416` whose size is the bytes on disk means the
    /// download was complete. The file is the one `partial` names.
    /// - Throws: `RestError`; if the answer breaks off again, its ``RestError/partialDownload`` names
    ///   what is on disk now. A `206` that does not start where the file ends is refused
    ///   (``DownloadResumeError``), the file left as it was.
    public func download(_ request: RequestBuilder, resuming partial: PartialDownload) async throws(RestError) -> DownloadedFile {
        // A `PartialDownload` may come back from storage, or from elsewhere: only a file that holds what
        // it says (a regular file, not a link, of exactly that size) is appended to or rewritten.
        let attributes = try? FileManager.default.attributesOfItem(atPath: partial.url.path)
        let held = (attributes?[.type] as? FileAttributeType) == .typeRegular ? (attributes?[.size] as? NSNumber)?.intValue : nil
        guard partial.byteCount >= 0, held == partial.byteCount else {
            throw RestError(
                .invalidRequest(
                    "the partial download at \(partial.url.path) holds \(held.map { "\($0) bytes" } ?? "no regular file"), not the \(partial.byteCount) it names"
                ), method: request.method, url: request.describeURL(baseURL: baseURL))
        }
        var ranged = request
        ranged.setHeader("Range", "bytes=\(partial.byteCount)-")
        if let validator = partial.validator { ranged.setHeader("If-Range", validator) }
        let response: StreamedResponse
        do {
            response = try await stream(ranged)
        } catch {
            var error = error
            if error.status == .rangeNotSatisfiable, Self.completeLength(error.headerFields) == partial.byteCount {
                // Everything had arrived: the bytes on disk are the body.
                return DownloadedFile(
                    url: partial.url, contentType: partial.contentType, suggestedFilename: partial.suggestedFilename,
                    byteCount: partial.byteCount)
            }
            // Nothing changed on disk: the same partial can be resumed later.
            error.partialDownload = partial
            throw error
        }
        let continues = response.status == .partialContent
        if continues {
            guard let range = response.headerFields[.contentRange], Self.rangeStart(range) == partial.byteCount else {
                throw downloadFailure(
                    .decoding(
                        DownloadResumeError(contentRange: response.headerFields[.contentRange], byteCount: partial.byteCount)),
                    request, response)
            }
        }
        let sink: PrivateFile.Sink
        do {
            sink = try await PrivateFile.Sink.reopen(at: partial.url.path, truncating: !continues)
        } catch {
            throw downloadFailure(.saving(error), request, response)
        }
        return try await receive(
            response, of: request, into: sink, at: partial.url, after: continues ? partial.byteCount : 0,
            suggested: partial.suggestedFilename)
    }

    /// Writes `response`'s body to `sink` (after `offset` bytes already there), a mebibyte at a time.
    private func receive(
        _ response: StreamedResponse, of request: RequestBuilder, into sink: PrivateFile.Sink, at file: URL, after offset: Int,
        suggested: String?
    ) async throws(RestError) -> DownloadedFile {
        let expected = response.headerFields[.contentLength].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
        let limit = request.maximumResponseSize ?? .max
        // A repeated Content-Type may arrive joined ("a, a"); a media type never holds a comma.
        let contentType = response.headerFields[.contentType].flatMap { $0.split(separator: ",").first }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        var total = offset
        var pending: [UInt8] = []
        do {
            if let expected, expected > limit - offset {
                throw downloadFailure(.transport(BodyStreamError.tooLarge(limit: limit)), request, response)
            }
            TransferProgress.report(.responseHeadReceived(expectedBytes: expected.map { $0 + offset }))
            // Chunks gathered to a mebibyte per write: one hop to the file queue per mebibyte, not per
            // network read (16 KiB on URLSession, up to 64 KiB on NIO).
            for try await chunk in response.body {
                guard chunk.count <= limit - total else {
                    throw downloadFailure(.transport(BodyStreamError.tooLarge(limit: limit)), request, response)
                }
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
            var failure = (error as? RestError) ?? downloadFailure(.saving(error), request, response)
            // What was written is kept only when the server can send the rest and the failure was the
            // transfer's (a body past the limit, or a disk that failed, is not worth resuming).
            let validators = (etag: response.headerFields[.eTag], lastModified: response.headerFields[.lastModified])
            let resumable =
                response.headerFields[.acceptRanges]?.lowercased().contains("bytes") == true
                && (validators.etag.map { !$0.hasPrefix("W/") } == true || validators.lastModified != nil)
            let brokeOff: Bool
            switch failure.reason {
            case .transport(let underlying): brokeOff = !(underlying is BodyStreamError)
            case .timedOut, .cancelled: brokeOff = true
            default: brokeOff = false
            }
            // The bytes that arrived are whole: the last ones gathered go to disk too.
            if brokeOff, resumable, total > 0, (try? await sink.write(pending)) != nil, (try? await sink.close()) != nil {
                failure.partialDownload = PartialDownload(
                    url: file, byteCount: total, etag: validators.etag, lastModified: validators.lastModified,
                    contentType: contentType, suggestedFilename: suggested)
                throw failure
            }
            await sink.discard()
            throw failure
        }
        return DownloadedFile(url: file, contentType: contentType, suggestedFilename: suggested, byteCount: total)
    }

    private func downloadFailure(_ reason: RestError.Reason, _ request: RequestBuilder, _ response: StreamedResponse) -> RestError
    {
        RestError(
            reason, method: request.method, url: request.describeURL(baseURL: baseURL), status: response.status,
            headerFields: response.headerFields, body: nil)
    }

    /// The complete length a `Content-Range` names (`bytes */1234`, `bytes 0-9/1234`), if it names one.
    static func completeLength(_ fields: HTTPFields?) -> Int? {
        guard let range = fields?[.contentRange], let slash = range.lastIndex(of: "/") else { return nil }
        return Int(range[range.index(after: slash)...].trimmingCharacters(in: .whitespaces))
    }

    /// The first byte a `Content-Range` of `bytes a-b/size` names.
    static func rangeStart(_ range: String) -> Int? {
        let text = range.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes "), let dash = text.firstIndex(of: "-") else { return nil }
        return Int(text[text.index(text.startIndex, offsetBy: 6)..<dash].trimmingCharacters(in: .whitespaces))
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

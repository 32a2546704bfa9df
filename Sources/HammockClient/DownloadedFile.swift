public import Foundation

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
        let url = directory.appendingPathComponent("hammock-\(UUID().uuidString)-\(suggested ?? "download")")
        do {
            try Data(raw.body).write(to: url, options: .atomic)
        } catch {
            throw RestError(
                .decoding(error), method: request.method, url: request.describeURL(baseURL: baseURL), status: raw.status,
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

    /// The `filename` parameter of a `Content-Disposition` value, stripped of any directory part.
    static func filename(fromContentDisposition value: String) -> String? {
        guard let name = HeaderValue(parsing: value).parameter("filename") else { return nil }
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        return last.isEmpty || last == "." || last == ".." ? nil : last
    }
}

/// What a transport can tell about a transfer while it runs, for progress bars.
public enum TransferEvent: Sendable, Hashable {
    /// The response head arrived (the wait for the server is over); `expectedBytes` is its
    /// `Content-Length`, if it gave one.
    case responseHeadReceived(expectedBytes: Int?)
    /// So many body bytes have arrived in all.
    case responseBytesReceived(total: Int)
    /// So many bytes of the request body have gone to the transport in all, of `expected` if known. A
    /// file body reports as it goes: each chunk as AsyncHTTPClient reads it to send, URLSession's upload
    /// task's own progress, and in process each chunk as the server's request is read whole; a body of
    /// bytes reports once, whole, when the answer comes. A retry sends a file again, from zero.
    case requestBytesSent(total: Int, expected: Int?)
}

/// Receives the transfer events of the task that binds it.
///
/// A class rather than a bare closure on purpose: with Swift 6.3 on Linux, optimized builds crash in
/// `swift_task_localValuePush` when a task-local holds an optional function value (reproduced in a
/// twenty-line program); a reference does not.
public final class TransferReporter: Sendable {
    private let handler: @Sendable (TransferEvent) -> Void

    /// A reporter calling `handler` for each event, on the transport's task.
    public init(_ handler: @escaping @Sendable (TransferEvent) -> Void) { self.handler = handler }

    /// Passes `event` on.
    public func report(_ event: TransferEvent) { handler(event) }
}

/// The channel from transports to whoever wants to show progress, carried by the task: no transport
/// or interceptor signature changes, and transports that say nothing cost nothing.
///
/// ```swift
/// // A caller that wants progress:
/// let (response, body) = try await TransferProgress.$reporter.withValue(TransferReporter { print($0) }) {
///     try await client.perform(request, body: nil)
/// }
/// // A transport that can tell:
/// TransferProgress.report(.responseHeadReceived(expectedBytes: contentLength))
/// ```
/// `AsyncHTTPClientTransport` and `MockServerTransport` report the response; `URLSessionTransport` hands
/// over whole responses and does not. A `RestClient` reports the request body sent on every transport.
/// Observable resources turn these events into their requests' `progress`.
public enum TransferProgress {
    /// Receives the events of transfers made by the current task, if anyone listens.
    @TaskLocal public static var reporter: TransferReporter?

    /// Whether anyone listens (so a transport can skip the work of counting).
    public static var isObserved: Bool { reporter != nil }

    /// Tells the listener, if any, about `event`.
    public static func report(_ event: TransferEvent) {
        reporter?.report(event)
    }
}

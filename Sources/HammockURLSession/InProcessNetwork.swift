public import Foundation
public import HammockServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a URLSession client meets from a mock server answered in process, as it would over a socket:
/// one mapping, used by ``HammockURLProtocol`` and by HammockTesting's `MockServerTransport`.
public enum InProcessNetwork {
    /// The error a URLSession client meets for `fault` over a socket. On Linux (FoundationNetworking,
    /// libcurl underneath) these were measured over loopback (`FaultTransportTests`): an empty reply is
    /// `badServerResponse`, a reset `networkConnectionLost`, a cut body `unknown` ("transfer closed
    /// with bytes remaining"), bytes that are not HTTP `unsupportedURL` (curl's "HTTP/0.9 not
    /// allowed"). On Apple platforms URLSession reports a lost connection for the first three and
    /// `cannotParseResponse` for bytes that are not HTTP (not measured here: no Apple machine runs
    /// this suite). A timeout is `timedOut` on both.
    public static func urlError(for fault: ConnectionFault) -> URLError {
        #if canImport(FoundationNetworking)
        switch fault {
        case .drop, .empty: URLError(.badServerResponse)
        case .reset: URLError(.networkConnectionLost)
        case .truncate: URLError(.unknown)
        case .malformed: URLError(.unsupportedURL)
        case .timeout: URLError(.timedOut)
        }
        #else
        switch fault {
        case .drop, .empty, .reset, .truncate: URLError(.networkConnectionLost)
        case .malformed: URLError(.cannotParseResponse)
        case .timeout: URLError(.timedOut)
        }
        #endif
    }
}

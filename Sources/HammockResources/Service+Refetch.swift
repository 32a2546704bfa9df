public import Foundation

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif
#if canImport(Network)
import Network
import Synchronization
#endif

extension Service {
    /// Calls ``refetchStale()`` each time `events` yields, until the sequence ends, the task this returns
    /// is cancelled, or an event finds the service gone (the task does not keep it alive).
    ///
    /// ```swift
    /// let refetching = api.refetchStale(whenever: reachability.becameReachable)   // any AsyncSequence
    /// refetching.cancel()                                                         // to stop
    /// ```
    @discardableResult
    public func refetchStale<Events: AsyncSequence & Sendable>(whenever events: Events) -> Task<Void, Never> {
        Task { @MainActor [weak self] in
            do {
                for try await _ in events {
                    guard let self else { return }
                    self.refetchStale()
                }
            } catch {
                // A sequence that fails ends the refetching, as one that finishes does.
            }
        }
    }

    /// Calls ``refetchStale()`` each time one of `names` is posted to `center` (observed from the moment
    /// this returns), until the task this returns is cancelled or a post finds the service gone. Posts
    /// that come while a refetch runs count once.
    ///
    /// ```swift
    /// api.refetchStale(whenPosted: [.userDidSignIn])
    /// ```
    @discardableResult
    public func refetchStale(
        whenPosted names: [Notification.Name], by center: NotificationCenter = .default
    ) -> Task<Void, Never> {
        let (posts, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        // Registered before this returns, so a post right after the call counts. The tokens are not
        // Sendable: they go to the task (on this actor too) and are removed there alone.
        let tokens = names.map { name in
            center.addObserver(forName: name, object: nil, queue: nil) { _ in continuation.yield() }
        }
        return Task { @MainActor [weak self] in
            defer { for token in tokens { center.removeObserver(token) } }
            await withTaskCancellationHandler {
                for await _ in posts {
                    guard let self else { return }
                    self.refetchStale()
                }
            } onCancel: {
                continuation.finish()
            }
        }
    }

    #if (canImport(UIKit) && !os(watchOS)) || canImport(AppKit)
    /// Reloads the observed resources that went stale when the app comes back to the foreground and when
    /// the network comes back, until the task this returns is cancelled. Apple platforms only; elsewhere
    /// call ``refetchStale(whenever:)`` with your own events.
    ///
    /// ```swift
    /// let refetching = api.refetchStaleOnForegroundAndReconnect()    // at launch
    /// ```
    @discardableResult
    public func refetchStaleOnForegroundAndReconnect() -> Task<Void, Never> {
        #if canImport(UIKit) && !os(watchOS)
        let foreground = refetchStale(whenPosted: [UIApplication.willEnterForegroundNotification])
        #else
        let foreground = refetchStale(whenPosted: [NSApplication.didBecomeActiveNotification])
        #endif
        #if canImport(Network)
        let reconnect = refetchStale(whenever: NetworkReturns())
        #endif
        return Task { @MainActor in
            await withTaskCancellationHandler {
                await foreground.value
            } onCancel: {
                foreground.cancel()
                #if canImport(Network)
                reconnect.cancel()
                #endif
            }
        }
    }
    #endif
}

#if canImport(Network)
/// Yields each time the network path becomes usable after it was not (not for the first report).
struct NetworkReturns: AsyncSequence, Sendable {
    typealias Element = Void

    /// Whether the last path seen was usable; `nil` before the first.
    final class LastStatus: Sendable {
        private let satisfied = Mutex<Bool?>(nil)

        /// Records `isSatisfied`; true when it turns usable after a path that was not.
        func cameBack(_ isSatisfied: Bool) -> Bool {
            satisfied.withLock { last in
                defer { last = isSatisfied }
                return isSatisfied && last == false
            }
        }
    }

    /// The monitor, held where a `@Sendable` termination handler may reach it: behind a lock, so the
    /// monitor itself need not be `Sendable`.
    final class Monitor: Sendable {
        let held: Mutex<NWPathMonitor?>
        init(_ monitor: sending NWPathMonitor) { held = Mutex(monitor) }
        func cancel() {
            held.withLock {
                $0?.cancel()
                $0 = nil
            }
        }
    }

    func makeAsyncIterator() -> AsyncStream<Void>.Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let pathMonitor = NWPathMonitor()
        let last = LastStatus()
        pathMonitor.pathUpdateHandler = { path in
            if last.cameBack(path.status == .satisfied) { continuation.yield() }
        }
        pathMonitor.start(queue: DispatchQueue(label: "hammock.network-returns"))
        let monitor = Monitor(pathMonitor)
        continuation.onTermination = { _ in monitor.cancel() }
        return stream.makeAsyncIterator()
    }
}
#endif

/// Waits until `condition` holds, for effects that happen on other tasks: bounded (about ten seconds
/// at most) and never a timing claim. Returns whether it came true; check it with `#expect`.
///
/// ```swift
/// feed.removeObservers(ownedBy: screen)
/// #expect(await eventually { clock.sleeperCount == 0 })
/// ```
/// It yields first, then sleeps a millisecond between checks, and runs `condition` on the caller's actor.
public func eventually(
    isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool
) async -> Bool {
    for attempt in 0..<20_000 {
        if condition() { return true }
        if attempt < 1_000 {
            await Task.yield()
        } else {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
    return condition()
}

extension Duration {
    /// This duration as a wait a clock can sleep: from zero to a year (366 days). A clock's `sleep` traps
    /// ("Not enough bits to represent the passed value") when now plus the duration passes `Int64.max`
    /// seconds, about 292 years: `.seconds(Int64.max)` is a natural spelling of "practically never",
    /// and a year is longer than any wait a client means.
    package var clampedForSleep: Duration { min(max(self, .zero), URLSessionTransport.longestTimeout) }
}

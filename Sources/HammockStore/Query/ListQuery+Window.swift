extension ListQuery.Window {
    /// The same window with every number where it means something: pages and page sizes from 1,
    /// positions from 0, an end not before its start. The parser refuses anything else from a request
    /// (a 400 naming the parameter), but a window built in code may hold any `Int`, and every
    /// computation on a window starts from this one so that none of them can trap.
    package var clamped: Self {
        switch self {
        case .page(let number, let size): .page(number: max(number, 1), size: max(size, 1))
        case .range(let start, let end):
            .range(start: max(start, 0), end: end.map { Swift.max($0, Swift.max(start, 0)) })
        }
    }

    /// The first position the window covers and the position after its last, among any number of
    /// records; both saturate at `Int.max` (`_page=2&_per_page=9223372036854775807` starts past any table).
    package var positions: (start: Int, end: Int) {
        switch clamped {
        case .page(let number, let size):
            let (offset, overflow) = (number - 1).multipliedReportingOverflow(by: size)
            if overflow { return (Int.max, Int.max) }
            return (offset, offset.saturatingAdd(size))
        case .range(let start, let end):
            return (start, end ?? Int.max)
        }
    }
}

extension Int {
    /// `self + other`, or `Int.max` where the sum would not fit; both are never negative here.
    package func saturatingAdd(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other < 0 ? Int.min : Int.max) : sum
    }
}

/// Where each chunk of a chunked sequence begins, kept as a Fenwick (binary indexed) tree over the
/// chunks' sizes: a chunk's start, the chunk holding a position, and a change of one chunk's size each
/// take log2(chunks) steps.
///
/// An array of starts answers the first two as fast but pays for the third: every later start moves.
/// At a million records a field index has 4,000 to 8,000 chunks, and a `POST` whose values sort early
/// (a `null` city, a small number) shifted most of them in each index it landed early in: 64 KB of
/// memory written per index per write. Adding or removing a chunk (one write in about 256) rebuilds the tree from the
/// sizes, which are kept here beside it: rebuilding from the chunks themselves read 8,000 array headers
/// scattered over the heap, and cost 18% of a `POST`'s CPU at a million records.
struct ChunkPositions: Sendable, Equatable {
    /// The size of each chunk.
    private var sizes: [Int] = []
    /// `sums[i]` (from 1) is the total size of chunks `i - lowbit(i) ..< i` (counted from 0); `sums[0]` is
    /// unused.
    private var sums: [Int] = [0]

    /// The number of chunks.
    var chunkCount: Int { sizes.count }

    init() {}

    /// The positions of chunks of these sizes, in order.
    init(sizes: [Int]) {
        self.sizes = sizes
        rebuild()
    }

    /// The tree again from the sizes: linear, each partial sum passed on to its parent once.
    private mutating func rebuild() {
        sums.removeAll(keepingCapacity: true)
        sums.append(0)
        sums.append(contentsOf: sizes)
        sums.withUnsafeMutableBufferPointer { sums in
            for index in 1..<max(1, sums.count) {
                let parent = index + (index & -index)
                // Sums are counts of entries held in memory, far below `Int.max`: they cannot wrap.
                if parent < sums.count { sums[parent] &+= sums[index] }
            }
        }
    }

    /// Notes that `chunk` grew by `change` entries (shrank, if negative).
    mutating func add(_ change: Int, to chunk: Int) {
        sizes[chunk] += change
        sums.withUnsafeMutableBufferPointer { sums in
            var index = chunk + 1
            while index < sums.count {
                sums[index] &+= change
                index += index & -index
            }
        }
    }

    /// Notes that the last `moved` entries of `chunk` became a chunk of their own, right after it.
    mutating func split(_ chunk: Int, moving moved: Int) {
        sizes[chunk] -= moved
        sizes.insert(moved, at: chunk + 1)
        rebuild()
    }

    /// Notes that `chunk` (now empty) is gone.
    mutating func remove(_ chunk: Int) {
        sizes.remove(at: chunk)
        rebuild()
    }

    /// The position of `chunk`'s first entry: the sizes of the chunks before it (the total, for
    /// `chunkCount`).
    func start(of chunk: Int) -> Int {
        var index = min(chunk, chunkCount)
        var total = 0
        while index > 0 {
            total &+= sums[index]
            index -= index & -index
        }
        return total
    }

    /// The chunk holding `position` and the offset in it, for a position below the total size and chunks
    /// that are not empty. One descent of the tree: each step halves what remains.
    func locate(_ position: Int) -> (chunk: Int, offset: Int) {
        var index = 0
        var rest = position
        var step = chunkCount == 0 ? 0 : 1 << (Int.bitWidth - 1 - chunkCount.leadingZeroBitCount)
        while step > 0 {
            let next = index + step
            if next < sums.count, sums[next] <= rest {
                index = next
                rest -= sums[next]
            }
            step >>= 1
        }
        return (index, rest)
    }

    /// Bytes held.
    var byteCount: Int { (sizes.capacity + sums.capacity) * MemoryLayout<Int>.stride }
}

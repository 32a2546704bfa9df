import HammockJSON

/// A table's rows by record key, in 256 dictionaries that grow one at a time, so that growing never
/// rehashes the whole table at once under the store's lock.
///
/// A Swift `Dictionary` doubles when three quarters full and rehashes every entry in that one insert. A
/// table loaded with a million records had room for 1,572,864 keys; the `POST` that came past it rehashed
/// them all while every request waited behind the lock: 470 ms, where the slowest request of the windows
/// around it took under 10 ms (docs/benchmarks.md, "Seventh step"). Split in evenly filled shards, the
/// growths are smaller but still come in one burst, since every shard fills at the same pace. So each
/// shard grows a little early, at its own fill: shard `s` doubles when `(768 + s) / 1024` of its capacity
/// is used, from three quarters for the first to nearly all of it (where a dictionary grows by itself)
/// for the last. After a load of a million records the 256 growths spread over the inserts from 1.18 to
/// 1.57 million, each rehashing some 5,000 keys.
struct RowsByKey: Sendable {
    private static let shardBits = 8
    private var shards = [[RecordKey: Int32]](repeating: [:], count: 1 << shardBits)

    /// The shard of `key`: an integer's low bits (generated keys count up, so consecutive keys take turns),
    /// the hash of anything else.
    @inline(__always)
    private static func shard(of key: RecordKey) -> Int {
        let mask = (1 << shardBits) - 1
        if case .integer(let number) = key.key { return Int(truncatingIfNeeded: number) & mask }
        return key.hashValue & mask
    }

    /// How many keys shard `shard` holds before it grows, out of `capacity` (what it holds before it
    /// would grow by itself).
    @inline(__always)
    private static func growthPoint(of shard: Int, capacity: Int) -> Int { capacity * (768 + shard) / 1024 }

    /// Room for `count` keys in all, spread over the shards, each below its growth point: as much room
    /// as one dictionary would reserve, within a power of two.
    mutating func reserveCapacity(_ count: Int) {
        let each = count / shards.count + 1
        for shard in shards.indices { shards[shard].reserveCapacity(each * 1024 / (768 + shard) + 1) }
    }

    subscript(key: RecordKey) -> Int32? {
        get { shards[Self.shard(of: key)][key] }
        set {
            let shard = Self.shard(of: key)
            if newValue != nil, shards[shard].count >= Self.growthPoint(of: shard, capacity: shards[shard].capacity) {
                // Twice the capacity, not one more: capacities are three quarters of a power of two, and one
                // more than twice one would take the next power of two, four times the room.
                shards[shard].reserveCapacity(shards[shard].capacity * 2)
            }
            shards[shard][key] = newValue
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: RecordKey) -> Int32? {
        shards[Self.shard(of: key)].removeValue(forKey: key)
    }

    var count: Int { shards.reduce(0) { $0 + $1.count } }
}

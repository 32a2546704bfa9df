/// The parser's stack of finished elements and members: a container's children are pushed as they are
/// parsed and *moved* into the container's array when it closes. An `Array` used as the stack would copy
/// them out and destroy the originals, a retain and a release per value.
struct ParserStack<Element>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 64) {
        self.capacity = max(capacity, 1)
        base = UnsafeMutablePointer<Element>.allocate(capacity: self.capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    @inline(__always)
    mutating func push(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    private mutating func grow() {
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity *= 2
    }

    /// The element at `position`, which must be below `count`.
    subscript(position: Int) -> Element {
        get {
            precondition(position >= 0 && position < count, "ParserStack index out of range")
            return base[position]
        }
        set {
            precondition(position >= 0 && position < count, "ParserStack index out of range")
            base[position] = newValue
        }
    }

    /// The position of the first element from `start` on that satisfies `predicate`.
    func firstIndex(from start: Int, where predicate: (Element) -> Bool) -> Int? {
        var position = start
        while position < count {
            if predicate(base[position]) { return position }
            position += 1
        }
        return nil
    }

    /// Moves the elements from `start` to the top into a new array and pops them.
    mutating func popArray(from start: Int) -> [Element] {
        precondition(start >= 0 && start <= count, "ParserStack range out of bounds")
        let moved = count - start
        let source = base + start
        let array = [Element](unsafeUninitializedCapacity: moved) { buffer, initialized in
            if let destination = buffer.baseAddress { destination.moveInitialize(from: source, count: moved) }
            initialized = moved
        }
        count = start
        return array
    }

    /// Pushes copies of `elements`.
    mutating func push(contentsOf elements: ArraySlice<Element>) {
        for element in elements { push(element) }
    }
}

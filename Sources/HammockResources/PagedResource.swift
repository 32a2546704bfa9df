public import Foundation
public import HammockClient
import HammockJSON
public import Observation

/// A list the server answers a page at a time, loaded as far as the app asks: an infinite scroll.
///
/// ```swift
/// let people = api.pagedResource("/people?_per_page=20", of: Person.self, paging: .link())
/// try await people.loadIfNeeded()          // the first page, or all loaded pages again when stale
/// List(people.items) { … }.onAppear(last) { Task { try await people.loadNextPage() } }
/// try await people.refresh()               // pull to refresh: every page again, from the first
/// ```
/// Each page is the ``Resource`` at its URL (the one object per URL, with its ETag, cache and
/// invalidation), and ``items`` are read from the pages' data, so a page the service wipes (sign-out)
/// or overrides shows at once. Loads are serialized: two `loadNextPage()` calls while one is in flight
/// load one page, and a refresh waits for a next page in flight (then reloads it too).
///
/// A refresh is coherent: the pages are loaded again from the first, each next URL taken from the page
/// just loaded (a cursor or a total that moved is followed, never mixed with the old chain), as many
/// pages as were loaded (fewer if the list ended); the new pages replace the old ones together when all
/// have answered, and a failure leaves the old ones in place.
@MainActor
@Observable
public final class PagedResource<Item: Sendable> {
    /// The first page's resource.
    @ObservationIgnored public let firstPage: Resource
    @ObservationIgnored let paging: Paging
    @ObservationIgnored let decode: @Sendable ([UInt8]) throws -> [Item]

    /// The pages loaded so far, in order.
    public private(set) var pages: [Page] = []
    /// The error of the latest page load, if it failed after the latest success.
    public private(set) var latestError: ResourceError?
    /// Whether a next page is being loaded.
    public private(set) var isLoadingNextPage = false
    /// Whether the pages are being loaded again (or the first page for the first time).
    public private(set) var isRefreshing = false

    /// What is in flight, and how to join it.
    @ObservationIgnored var inFlight: (kind: Operation, id: Int, task: Task<Result<Void, ResourceError>, Never>)?
    @ObservationIgnored var nextOperationID = 0
    /// Moved by ``reset()``: an operation that started before it does not put its pages back.
    @ObservationIgnored var generation = 0

    enum Operation { case next, refresh }

    /// A list over `firstPage`, read by `paging`, each page's items decoded by `decode`.
    public init(firstPage: Resource, paging: Paging, decode: @escaping @Sendable ([UInt8]) throws -> [Item]) {
        self.firstPage = firstPage
        self.paging = paging
        self.decode = decode
    }

    /// One page: its resource, and what it held when read.
    public struct Page {
        /// The page's resource (its URL, data and requests).
        public let resource: Resource
        /// What the page's data held when it was read: its items and the next page's URL.
        public let items: [Item]
        /// The URL of the page after it, `nil` on the last.
        public let next: URL?
        /// The data version the items were read from.
        let version: Int
    }

    /// Every loaded page's items, in order. Reading it observes the pages' data: a page wiped by the
    /// service (sign-out) holds no items, and a list whose first page was wiped holds none at all.
    public var items: [Item] {
        guard firstPage.latestData != nil else { return [] }
        var all: [Item] = []
        for index in pages.indices {
            guard pages[index].resource.latestData != nil else { continue }
            all += current(index).items
        }
        return all
    }

    /// Whether there may be a page after those loaded: none loaded yet, or the last names a next one.
    public var hasNextPage: Bool {
        guard let last = pages.last else { return true }
        return last.next != nil
    }

    /// Whether the loaded pages are fresh: the first page's resource is up to date (not invalidated by a
    /// write, not expired) and has not been wiped.
    public var isUpToDate: Bool {
        !pages.isEmpty && firstPage.latestData != nil && firstPage.isUpToDate
    }

    /// Every loaded item, loading first if needed: the first page when none is loaded (or the first page's
    /// data was wiped), every loaded page again (``refresh()``) when they are stale, nothing when fresh.
    /// - Throws: ``ResourceError``: a page failed to load or to read.
    @discardableResult
    public func loadIfNeeded() async throws(ResourceError) -> [Item] {
        if !isUpToDate || inFlight?.kind == .refresh { try await refresh() }
        return items
    }

    /// Loads the page after the last one loaded (the first if none is), unless the list has ended.
    /// A call while a next page is in flight joins it.
    /// - Returns: the items of every loaded page.
    /// - Throws: ``ResourceError``: the page failed to load or to read; the pages loaded stay.
    @discardableResult
    public func loadNextPage() async throws(ResourceError) -> [Item] {
        try await run(.next) { (generation: Int) async throws(ResourceError) in
            if self.pages.isEmpty || self.firstPage.latestData == nil {
                let first = try await self.loadPage(self.firstPage, index: 0, itemsBefore: 0, forced: false)
                if generation == self.generation { self.pages = [first] }
                return
            }
            guard let last = self.pages.last, let next = last.next else { return }
            let itemsBefore = self.pages.reduce(0) { $0 + $1.items.count }
            let resource = self.firstPage.service.resource(absoluteURL: next)
            let page = try await self.loadPage(resource, index: self.pages.count, itemsBefore: itemsBefore, forced: false)
            if generation == self.generation { self.pages.append(Self.endingCycles(page, after: self.pages)) }
        }
        return items
    }

    /// Loads every loaded page again, from the first, following the next URL each new answer gives; at
    /// least the first page. Conditional requests (`If-None-Match`) keep unchanged pages cheap. A refresh
    /// in flight is joined.
    /// - Throws: ``ResourceError``: a page failed; the pages as they were stay.
    public func refresh() async throws(ResourceError) {
        try await run(.refresh) { (generation: Int) async throws(ResourceError) in
            // After a wipe, a new session starts from one page, not as deep as the old one scrolled.
            let count = self.firstPage.latestData == nil ? 1 : max(self.pages.count, 1)
            var fresh: [Page] = []
            var resource = self.firstPage
            var itemsBefore = 0
            while fresh.count < count {
                let page = Self.endingCycles(
                    try await self.loadPage(resource, index: fresh.count, itemsBefore: itemsBefore, forced: true), after: fresh)
                fresh.append(page)
                itemsBefore += page.items.count
                guard let next = page.next else { break }
                resource = self.firstPage.service.resource(absoluteURL: next)
            }
            if generation == self.generation { self.pages = fresh }
        }
    }

    /// `page`, ending the list if its next page is one already loaded: a server that names a page
    /// again (a cursor that does not move) would otherwise be scrolled for ever.
    static func endingCycles(_ page: Page, after pages: [Page]) -> Page {
        guard let next = page.next else { return page }
        let target = page.resource.service.resource(absoluteURL: next)
        guard target === page.resource || pages.contains(where: { $0.resource === target }) else { return page }
        return Page(resource: page.resource, items: page.items, next: nil, version: page.version)
    }

    /// Forgets the loaded pages (their resources keep their data); the next load starts from the first,
    /// and a load in flight does not put its pages back.
    public func reset() {
        generation += 1
        pages = []
        latestError = nil
    }

    /// Runs `body` as the one operation in flight, or joins one of the same kind. `body` gets the
    /// generation the operation started in (the moment it became the one in flight).
    private func run(
        _ kind: Operation, _ body: @escaping @MainActor (Int) async throws(ResourceError) -> Void
    ) async throws(ResourceError) {
        while let current = inFlight {
            if current.kind == kind { return try await current.task.value.get() }
            _ = await current.task.value
        }
        nextOperationID += 1
        let id = nextOperationID
        let generation = self.generation
        setFlag(kind, true)
        let task = Task { @MainActor () -> Result<Void, ResourceError> in
            let result: Result<Void, ResourceError>
            do throws(ResourceError) {
                try await body(generation)
                result = .success(())
                self.latestError = nil
            } catch {
                result = .failure(error)
                self.latestError = error
            }
            // Cleared here, before anyone waiting wakes: a waiter then sees the next operation or none.
            if self.inFlight?.id == id { self.inFlight = nil }
            self.setFlag(kind, false)
            return result
        }
        inFlight = (kind, id, task)
        try await task.value.get()
    }

    private func setFlag(_ kind: Operation, _ value: Bool) {
        switch kind {
        case .next: isLoadingNextPage = value
        case .refresh: isRefreshing = value
        }
    }

    /// Loads `resource` (now when `forced`, else if needed) and reads it as page `index`.
    private func loadPage(_ resource: Resource, index: Int, itemsBefore: Int, forced: Bool) async throws(ResourceError) -> Page {
        let entity: Entity
        if !forced, let request = resource.loadIfNeeded() {
            entity = try await request.value()
        } else if !forced, let data = resource.latestData, resource.latestError == nil {
            entity = data
        } else {
            // Asked again after a failure: the user's retry goes out, whatever the retry time says.
            entity = try await resource.load().value()
        }
        return try read(resource, entity: entity, index: index, itemsBefore: itemsBefore)
    }

    /// Page `index` read from `entity`.
    func read(_ resource: Resource, entity: Entity, index: Int, itemsBefore: Int) throws(ResourceError) -> Page {
        do {
            let cut = try paging.read(Paging.Answer(entity: entity, url: resource.url, index: index, itemsBefore: itemsBefore))
            let items = try decode(cut.items?.serialized() ?? entity.bytes)
            return Page(resource: resource, items: items, next: cut.next, version: resource.dataVersion)
        } catch {
            throw ResourceError(
                userMessage: "Page \(index + 1) of \(firstPage.url.absoluteString) cannot be read: \(error)",
                cause: .pipeline(error), entity: entity, timestamp: resource.core.now)
        }
    }

    /// Page `index` as its resource's data holds it now: read again when the data changed since (a
    /// local override, a reload by another view), except during a refresh, whose pages replace these
    /// together when all have answered (a page 1 reloaded is not shown beside the old page 2).
    func current(_ index: Int) -> Page {
        let page = pages[index]
        guard !isRefreshing, page.resource.dataVersion != page.version, let entity = page.resource.latestDataUntracked
        else { return page }
        let itemsBefore = pages[..<index].reduce(0) { $0 + $1.items.count }
        guard let fresh = try? read(page.resource, entity: entity, index: index, itemsBefore: itemsBefore) else { return page }
        // Kept without a notification: the data change that made it already notified.
        _pages[index] = fresh
        return fresh
    }
}

extension PagedResource where Item: Decodable {
    /// A list over `firstPage` whose items are decoded from JSON by `decoder`.
    public convenience init(
        firstPage: Resource, paging: Paging, decoder: @escaping @Sendable () -> JSONDecoder = RestClient.defaultDecoder
    ) {
        self.init(firstPage: firstPage, paging: paging) { bytes in try decoder().decode([Item].self, from: Data(bytes)) }
    }
}

extension Service {
    /// A paged list whose first page is at `path`, its items decoded as `Item`.
    ///
    /// ```swift
    /// let people = api.pagedResource("/people?_cursor=&_limit=20", of: Person.self, paging: .cursor())
    /// ```
    public func pagedResource<Item: Decodable & Sendable>(
        _ path: String, of type: Item.Type, paging: Paging,
        decoder: @escaping @Sendable () -> JSONDecoder = RestClient.defaultDecoder
    ) -> PagedResource<Item> {
        PagedResource(firstPage: resource(path), paging: paging, decoder: decoder)
    }

    /// A paged list whose first page is what an `@API` method returning an array reads.
    ///
    /// ```swift
    /// let people = api.pagedResource(client.endpoints.people(perPage: 20), paging: .link())
    /// ```
    public func pagedResource<Item: Decodable & Sendable>(
        _ endpoint: Endpoint<[Item]>, paging: Paging,
        decoder: @escaping @Sendable () -> JSONDecoder = RestClient.defaultDecoder
    ) -> PagedResource<Item> {
        PagedResource(firstPage: resource(endpoint, decoder: decoder).resource, paging: paging, decoder: decoder)
    }
}

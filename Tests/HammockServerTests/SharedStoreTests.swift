import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

@testable import HammockPostgres

/// Several servers on one PostgreSQL database, over loopback: what one writes the other serves at
/// once, with the same validators; keys stay distinct; seed data loads once; namespaces keep teams
/// apart; and a database that goes away and comes back.
@Suite("Servers sharing one database")
struct SharedStoreTests {
    static let resources = [Fixtures.people, Fixtures.cars]

    /// A server on its own connection pool to the namespace `namespace`.
    static func server(
        namespace: String, now: @escaping @Sendable () -> Date = { Date() }
    ) async throws -> MockServer {
        let store = try await PostgresStore.open(StoreKind.postgresConfiguration(namespace: namespace))
        return try await MockServer(resources: resources, store: store, now: now)
    }

    /// A store and a server on a cluster just started, for a test whose connect limit is short on purpose
    /// (an outage, a frozen server): on a loaded machine (the whole suite beside it) the first connections
    /// of a fresh cluster took longer than that in about one full run in four, in opening the store or in
    /// the server's first statements, so both are tried again (five times, a second apart). What the test
    /// is about starts after this.
    static func openServer(_ configuration: PostgresStore.Configuration) async throws -> (PostgresStore, MockServer) {
        for _ in 1..<5 {
            let store = try? await PostgresStore.open(configuration)
            if let store, let server = try? await MockServer(resources: resources, store: store) { return (store, server) }
            try? await store?.close()
            try await Task.sleep(for: .seconds(1))
        }
        let store = try await PostgresStore.open(configuration)
        return (store, try await MockServer(resources: resources, store: store))
    }

    /// The status of `GET path`, asked again every 200 ms while `retry` holds of it, for thirty seconds
    /// at most; `nil` for a request that failed.
    static func status(of path: String, from client: LoopbackClient, polledWhile retry: (Int?) -> Bool) async throws -> Int? {
        var status = try? await client.send("GET", path).status
        for _ in 0..<150 where retry(status) {
            try await Task.sleep(for: .milliseconds(200))
            status = try? await client.send("GET", path).status
        }
        return status
    }

    static func namespace() -> String { "shared_" + UUID().uuidString.prefix(12).lowercased() }

    /// A file with one resource and three records to load.
    static func seedConfiguration() throws -> ServerConfiguration {
        let text = #"""
            {"resources": [{"name": "people", "fields": {"name": "string"}}],
             "data": {"people": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}
            """#
        return try ServerConfiguration(parsing: Array(text.utf8), file: "seed.json")
    }

    /// How many connections the database has from stores of `namespace` (by the application name each
    /// store signs in with), counted with the cluster's own psql.
    static func connections(ofNamespace namespace: String) async throws -> Int {
        let text = try await psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'hammock:\(namespace)'")
        return try #require(Int(text), "\(text)")
    }

    /// What the shared cluster's own psql prints for `query` (unaligned, tuples only), trimmed.
    static func psql(_ query: String) async throws -> String {
        let cluster = try await ThrowawayPostgres.shared()
        let psql = try ChildProcess(
            cluster.binaries + "psql",
            ["-h", "127.0.0.1", "-p", "\(cluster.port)", "-U", cluster.username, "-d", "postgres", "-Atc", query],
            adding: ["PGPASSWORD": cluster.password], output: .pipe, errors: .sameAsOutput)
        let output = try #require(psql.output)
        let text = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: String(decoding: output.readToEnd(), as: UTF8.self)) }
        }
        #expect(await psql.termination() == .exited(0), "\(text)")
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("A store dropped without being closed closes its connections; each names its namespace to the database")
    func droppedStoreClosesItsConnections() async throws {
        let namespace = Self.namespace()
        var store: PostgresStore? = try await PostgresStore.open(StoreKind.postgresConfiguration(namespace: namespace))
        #expect(await store?.health() == .available)
        #expect(try await Self.connections(ofNamespace: namespace) > 0)
        store = nil
        var open = -1
        for _ in 0..<100 where open != 0 {
            open = try await Self.connections(ofNamespace: namespace)
            if open != 0 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(open == 0, "connections of a dropped store are still open")
    }

    @Test("A write through one server is served by the other at once, with the same ETag and Last-Modified")
    func writesAreSharedAtOnce() async throws {
        let namespace = Self.namespace()
        // One wall clock for both, moved by the test: the dates are compared, never the moment a second turns.
        let wall = Clockwork(Date(timeIntervalSince1970: 1_900_000_000.25))
        let first = try await Self.server(namespace: namespace, now: { wall.now })
        let second = try await Self.server(namespace: namespace, now: { wall.now })
        try await first.whileServing { firstPort in
            try await second.whileServing { secondPort in
                let one = LoopbackClient(port: firstPort)
                let two = LoopbackClient(port: secondPort)
                wall.advance(1)
                #expect(try await one.send("POST", "/people", json: ["name": "ada"]).status == 201)
                let read = try await two.send("GET", "/people/1")
                #expect(read.status == 200 && read.json?["name"] == "ada")
                #expect(read.header("Last-Modified") == "Sun, 17 Mar 2030 17:46:41 GMT")
                // A change in the second an answer carried: neither server may give that date again, and
                // until the clock reaches the next second, neither gives one.
                #expect(try await two.send("PATCH", "/people/1", json: ["name": "bob"]).status == 200)
                #expect(try await one.send("GET", "/people/1").header("Last-Modified") == nil)
                #expect(try await two.send("GET", "/people").header("Last-Modified") == nil)
                wall.advance(1)
                for _ in 0..<3 {
                    let fromOne = try await one.send("GET", "/people/1")
                    let fromTwo = try await two.send("GET", "/people/1")
                    #expect(fromOne.json?["name"] == "bob" && fromTwo.json?["name"] == "bob")
                    #expect(fromOne.header("ETag") != nil && fromOne.header("ETag") == fromTwo.header("ETag"))
                    #expect(fromOne.header("Last-Modified") == "Sun, 17 Mar 2030 17:46:42 GMT")
                    #expect(fromOne.header("Last-Modified") == fromTwo.header("Last-Modified"))
                    let list = try await (one.send("GET", "/people"), two.send("GET", "/people"))
                    #expect(list.0.body == list.1.body && list.0.header("ETag") == list.1.header("ETag"))
                }
                // A tag from one server is a precondition the other honours.
                let tag = try #require(try await one.send("GET", "/people/1").header("ETag"))
                #expect(try await two.send("PATCH", "/people/1", json: ["name": "cy"]).status == 200)
                let stale = try await one.send(
                    "PATCH", "/people/1", body: Array(#"{"name":"dee"}"#.utf8),
                    contentType: "application/json", headers: ["If-Match": tag])
                #expect(stale.status == 412)
                #expect(try await one.send("GET", "/people/1").json?["name"] == "cy")
                // A delete through one orphans children the other serves.
                #expect(try await one.send("POST", "/people/1/cars", json: ["name": "mini"]).status == 201)
                #expect(try await two.send("DELETE", "/people/1").status == 204)
                #expect(try await one.send("GET", "/cars/1").json?["person_id"] == .null)
            }
        }
    }

    @Test("Two hundred creates at once over two servers give two hundred distinct ids")
    func concurrentCreates() async throws {
        let namespace = Self.namespace()
        let first = try await Self.server(namespace: namespace)
        let second = try await Self.server(namespace: namespace)
        try await first.whileServing { firstPort in
            try await second.whileServing { secondPort in
                let clients = [LoopbackClient(port: firstPort), LoopbackClient(port: secondPort)]
                let ids = try await withThrowingTaskGroup(of: Int?.self) { group in
                    for index in 0..<200 {
                        group.addTask {
                            let reply = try await clients[index % 2].send(
                                "POST", "/people", json: ["numberOfKids": .integer(index)])
                            return reply.status == 201 ? reply.json?["id"]?.intValue : nil
                        }
                    }
                    var ids: [Int] = []
                    for try await id in group { if let id { ids.append(id) } }
                    return ids
                }
                #expect(ids.count == 200)
                #expect(Set(ids) == Set(1...200))
                #expect(try await clients[1].send("GET", "/people").json?.arrayValue?.count == 200)
            }
        }
    }

    @Test("Servers starting together on one database load the seed data once")
    func seedLoadsOnce() async throws {
        let namespace = Self.namespace()
        let configuration = try Self.seedConfiguration()
        let servers = try await withThrowingTaskGroup(of: MockServer.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let store = try await PostgresStore.open(StoreKind.postgresConfiguration(namespace: namespace))
                    return try await MockServer(configuration: configuration, store: store)
                }
            }
            var servers: [MockServer] = []
            for try await server in group { servers.append(server) }
            return servers
        }
        let loaded = try await withThrowingTaskGroup(of: Int.self) { group in
            for server in servers {
                group.addTask { try await server.loadData(from: configuration).reduce(0) { $0 + $1.report.loaded } }
            }
            var loaded: [Int] = []
            for try await count in group { loaded.append(count) }
            return loaded
        }
        #expect(loaded.sorted() == [0, 0, 0, 3])
        let listed = try await servers[0].respond(to: MockRequest(.get, "/people")).json()
        #expect(listed.arrayValue?.compactMap { $0["name"]?.stringValue } == ["a", "b", "c"])
    }

    @Test("A load of a thousand records leaves its table vacuumed and analyzed; a load of three leaves that to autovacuum")
    func loadVacuumsAndAnalyzes() async throws {
        let namespace = Self.namespace()
        let store = try await PostgresStore.open(StoreKind.postgresConfiguration(namespace: namespace))
        do {
            try await checkLoadVacuums(store: store, namespace: namespace)
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }

    func checkLoadVacuums(store: PostgresStore, namespace: String) async throws {
        // Three people and a thousand pets, loaded together.
        let pets = (0..<1_000).map { "{\"name\": \"p\($0)\"}" }.joined(separator: ", ")
        let text =
            #"{"resources": [{"name": "people", "fields": {"name": "string"}}, {"name": "pets", "fields": {"name": "string"}}], "#
            + #""data": {"people": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "pets": ["# + pets + "]}}"
        let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "seed.json")
        let server = try await MockServer(configuration: configuration, store: store)
        func table(_ name: String) -> String { "'\"\(namespace)\".\"r:\(name)\"'::regclass" }
        func statistics(_ name: String) async throws -> String {
            try await Self.psql("SELECT vacuum_count, analyze_count FROM pg_stat_user_tables WHERE relid = \(table(name))")
        }
        // Before the load: created, never analyzed (-1 since PostgreSQL 14).
        #expect(try await Self.psql("SELECT reltuples FROM pg_class WHERE oid = \(table("pets"))") == "-1")
        #expect(try await server.loadData(from: configuration).reduce(0) { $0 + $1.report.loaded } == 1_003)
        // Analyzed: the row count is known. Vacuumed: counted in the table's statistics. (Whether a page
        // gets marked visible to all is PostgreSQL's call: not asserted.)
        #expect(try await Self.psql("SELECT reltuples FROM pg_class WHERE oid = \(table("pets"))") == "1000")
        #expect(try await statistics("pets") == "1|1")
        #expect(try await statistics("people") == "0|0")
    }

    @Test(
        "A page's total without conditions is the count the writes keep, whoever writes: two servers, a delete with dependents, psql, a reset, and a table from before the count"
    )
    func keptCounts() async throws {
        let namespace = Self.namespace()
        let one = try await Self.server(namespace: namespace)
        let two = try await Self.server(namespace: namespace)
        let people = "\"\(namespace)\".\"r:people\""
        let counts = "\"\(namespace)\".hammock_counts"
        func total(_ server: MockServer, _ resource: String = "people") async -> String? {
            await server.send(.get, "/\(resource)?_sort=name&_page=1&_per_page=2").0.headerFields[.totalCount]
        }
        func rows(_ table: String = "people") async throws -> String {
            try await Self.psql("SELECT count(*) FROM \"\(namespace)\".\"r:\(table)\"")
        }
        for index in 0..<5 { _ = await one.send(.post, "/people", json: ["name": .string("one \(index)")]) }
        for index in 0..<3 { _ = await two.send(.post, "/people", json: ["name": .string("two \(index)")]) }
        for name in ["mini", "golf"] { _ = await one.send(.post, "/people/1/cars", json: ["name": .string(name)]) }
        #expect(await total(two) == "8")
        #expect(await total(one, "cars") == "2")
        // Another client of the database, not a server: its delete is counted too.
        _ = try await Self.psql("DELETE FROM \(people) WHERE k = 8")
        #expect(await total(one) == "7")
        #expect(await one.send(.delete, "/people/1?_dependent=cars").0.status == .noContent)
        #expect(await total(two) == "6")
        let cars = try await rows("cars")
        #expect(cars == "0")
        #expect(await total(two, "cars") == cars)
        for index in 0..<70 { _ = await one.send(.post, "/people", json: ["name": .string("many \(index)")]) }
        #expect(await total(one) == "76")
        // Past the fold threshold (a hundred deltas of nothing added by hand): a reader folds the deltas
        // into one row, and the total stands.
        _ = try await Self.psql("INSERT INTO \(counts) (resource, delta) SELECT 'r:people', 0 FROM generate_series(1, 100)")
        #expect(await total(one) == "76")
        #expect(try await Self.psql("SELECT count(*) FROM \(counts) WHERE resource = 'r:people'") == "1")
        #expect(await total(two) == "76")
        // A table from an earlier version, without triggers or count: the next server to open the
        // namespace counts it once and puts the triggers on.
        _ = try await Self.psql(
            "DROP TRIGGER hammock_count_insert ON \(people); DROP TRIGGER hammock_count_delete ON \(people); "
                + "DROP TRIGGER hammock_count_truncate ON \(people); DELETE FROM \(counts) WHERE resource = 'r:people'")
        let three = try await Self.server(namespace: namespace)
        #expect(await total(three) == "76")
        _ = await three.send(.post, "/people", json: ["name": "after"])
        let rowsNow = try await rows()
        #expect(rowsNow == "77")
        #expect(await total(one) == rowsNow)
        // A reset puts back the data the server started with: none.
        #expect(await one.send(.post, "/__hammock/reset").0.status.kind == .successful)
        #expect(await total(two) == "0")
        _ = try await Self.psql("TRUNCATE \(people) CASCADE")
        #expect(await total(two) == "0")
    }

    @Test(
        "A sort reads the field's index in its order, nulls first, and a table from the first version gets its indexes made again"
    )
    func sortsReadIndexesInOrder() async throws {
        let namespace = Self.namespace()
        let one = try await Self.server(namespace: namespace)
        for name in ["b", "a", "c"] { _ = await one.send(.post, "/people", json: ["name": .string(name)]) }
        let people = "\"\(namespace)\".\"r:people\""
        // With sequential scans and sorts priced out, a plan without a Sort node is one the index orders.
        func plan(_ order: String) async throws -> String {
            try await Self.psql(
                "SET enable_seqscan = off; SET enable_sort = off; EXPLAIN SELECT k FROM \(people) ORDER BY \(order) LIMIT 20")
        }
        let ascending = try await plan("\"f:name\" ASC NULLS FIRST, k")
        #expect(ascending.contains("Index") && !ascending.contains("Sort"), "\(ascending)")
        // Descending, the index read backwards: only the ties are sorted.
        let descending = try await plan("\"f:name\" DESC NULLS LAST, k")
        #expect(descending.contains("Index") && !descending.contains("\n  ->  Sort"), "\(descending)")
        // The first version's index: nulls last, no key, under its own name.
        let newName = PostgresStore.indexName("people", "name", ordered: true)
        let oldName = PostgresStore.indexName("people", "name")
        _ = try await Self.psql(
            "DROP INDEX \"\(namespace)\".\"\(newName)\"; CREATE INDEX \"\(oldName)\" ON \(people) (\"f:name\")")
        _ = try await Self.server(namespace: namespace)
        // The namespace's indexes, filtered here: a condition on `indexdef` in the query made PostgreSQL
        // describe other tests' indexes too, and one dropped meanwhile failed the query ("could not open
        // relation with OID", in a clean-clone CI run).
        let indexes = try await Self.psql(
            "SELECT indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = '\(namespace)'"
        ).split(separator: "\n").filter { $0.contains("f:name") }.joined(separator: "\n")
        #expect(!indexes.contains(oldName + " "), "\(indexes)")
        #expect(indexes.contains(newName) && indexes.contains("NULLS FIRST, k)"), "\(indexes)")
        let names = await one.send(.get, "/people?_sort=-name&_page=1&_per_page=2").1?.arrayValue?.compactMap {
            $0["name"]?.stringValue
        }
        #expect(names == ["c", "b"])
    }

    @Test("Creates and deletes at once on two servers while readers fold the counts: the total is what the table holds")
    func keptCountsUnderRacingFolds() async throws {
        let namespace = Self.namespace()
        let one = try await Self.server(namespace: namespace)
        let two = try await Self.server(namespace: namespace)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<240 {
                group.addTask {
                    let server = index.isMultiple(of: 2) ? one : two
                    let (created, record) = await server.send(.post, "/people", json: ["name": .string("\(index)")])
                    #expect(created.status == .created)
                    // Every third record is deleted again by the other server.
                    if index.isMultiple(of: 3), let key = record?["id"]?.intValue {
                        #expect(await (server === one ? two : one).send(.delete, "/people/\(key)").0.status == .noContent)
                    }
                }
            }
            // Readers past the fold threshold all along, folding while the writes add deltas.
            for reader in [one, two] {
                group.addTask {
                    for _ in 0..<40 { _ = await reader.send(.get, "/people?_page=1&_per_page=1") }
                }
            }
            try await group.waitForAll()
        }
        let rows = try await Self.psql("SELECT count(*) FROM \"\(namespace)\".\"r:people\"")
        #expect(rows == "160")
        #expect(await one.send(.get, "/people?_page=1&_per_page=1").0.headerFields[.totalCount] == rows)
        #expect(await two.send(.get, "/people?_page=1&_per_page=1").0.headerFields[.totalCount] == rows)
    }

    @Test("A run that only writes keeps the deltas few: the writes fold them now and then, and the total stands")
    func writesFoldTheirDeltas() async throws {
        let namespace = Self.namespace()
        let server = try await Self.server(namespace: namespace)
        // One write in 64 folds: the chance that none of a thousand does is below one in six million.
        for index in 0..<1_000 { _ = await server.send(.post, "/people", json: ["name": .string("\(index)")]) }
        let rows = try await Self.psql("SELECT count(*) FROM \"\(namespace)\".hammock_counts WHERE resource = 'r:people'")
        #expect((Int(rows) ?? .max) < 1_000, "\(rows) deltas")
        #expect(await server.send(.get, "/people?_page=1&_per_page=1").0.headerFields[.totalCount] == "1000")
    }

    @Test("A namespace with quotes, dollar quotes and spaces in its name keeps its counts too")
    func keptCountsInAnOddNamespace() async throws {
        let namespace = "it's \"odd\" $body$ " + UUID().uuidString.prefix(8)
        let server = try await Self.server(namespace: namespace)
        for index in 0..<3 { _ = await server.send(.post, "/people", json: ["name": .string("\(index)")]) }
        #expect(await server.send(.delete, "/people/2").0.status == .noContent)
        #expect(await server.send(.get, "/people?_page=1&_per_page=1").0.headerFields[.totalCount] == "2")
    }

    @Test("Namespaces keep data apart on one database; the admin API's reset and snapshots work per namespace")
    func namespaces() async throws {
        let alice = try await Self.server(namespace: Self.namespace())
        let bob = try await Self.server(namespace: Self.namespace())
        _ = await alice.send(.post, "/people", json: ["name": "alice's"])
        #expect(await alice.send(.put, "/__hammock/snapshots/one").0.status.kind == .successful)
        _ = await alice.send(.post, "/people", json: ["name": "later"])
        #expect(await bob.send(.get, "/people").1?.arrayValue?.isEmpty == true)
        _ = await bob.send(.post, "/people", json: ["name": "bob's"])
        #expect(await alice.send(.post, "/__hammock/snapshots/one/restore").0.status.kind == .successful)
        #expect(await alice.send(.get, "/people").1?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["alice's"])
        #expect(await bob.send(.get, "/people").1?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["bob's"])
        #expect(await bob.send(.post, "/__hammock/reset").0.status.kind == .successful)
        #expect(await bob.send(.get, "/people").1?.arrayValue?.isEmpty == true)
        #expect(await alice.send(.get, "/people").1?.arrayValue?.count == 1)
    }

    @Test("A database that goes away answers 503 with Retry-After, never a hang, and the server recovers when it returns")
    func outageAndRecovery() async throws {
        let cluster = try await ThrowawayPostgres.make()
        let configuration = PostgresStore.Configuration(
            host: "127.0.0.1", port: cluster.port, username: cluster.username, password: cluster.password,
            // A limit a loaded machine's setup stays inside: at 10 s a cold CI run's setup timed out here
            // (the same stall as in Fixtures.postgresConfiguration). Once the store knows the database is
            // gone, requests do not wait for it: the connect probe (2 s) answers 503, not this limit.
            database: "postgres", namespace: "outage", connectTimeout: .seconds(2), operationTimeout: .seconds(60))
        // The short connect limit is for the outage; opening a fresh cluster on a loaded machine can take
        // longer (a CI run timed out here once, with the whole suite starting clusters at once).
        let (store, server) = try await Self.openServer(configuration)
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        try await server.whileServing { port in
            let client = LoopbackClient(port: port)
            // Before the outage too a connection may take longer than the 2 s probe on a loaded machine,
            // and the server rightly answers 503 then (a fresh machine's first full run did).
            #expect(try await Self.status(of: "/people/1", from: client, polledWhile: { $0 == 503 }) == 200)
            try await cluster.stop()
            for path in ["/people/1", "/people", "/people?name_like=a"] {
                let reply = try await client.send("GET", path)
                #expect(reply.status == 503, "\(path)")
                #expect(reply.header("Retry-After") != nil, "\(path)")
                #expect(reply.header("Content-Type")?.hasPrefix("application/problem+json") == true)
                #expect(!String(decoding: reply.body, as: UTF8.self).contains("PSQLError"))
            }
            let write = try await client.send("POST", "/people", json: ["name": "lost?"])
            #expect(write.status == 503)
            #expect(try await client.send("GET", "/__hammock/health").status == 503)
            try await cluster.start()
            // Back within the pool's reconnection backoff.
            #expect(try await Self.status(of: "/people/1", from: client, polledWhile: { $0 != 200 }) == 200)
            #expect(try await client.send("GET", "/people").json?.arrayValue?.count == 1)
            #expect(try await client.send("POST", "/people", json: ["name": "back"]).status == 201)
            #expect(try await client.send("GET", "/__hammock/health").status == 200)
        }
        try await store.close()
        try await cluster.remove()
    }

    @Test("A paused database (SIGSTOP) answers 503 while it is still paused, and the server recovers")
    func pausedDatabase() async throws {
        let cluster = try await ThrowawayPostgres.make()
        // A limit a loaded machine's setup stays inside (the full suite timed a 3 s one out); the answer
        // comes from the connect probe (3 s, then a sign-in that must answer within 6), which a frozen
        // server fails. Before, the call waited for its cancelled query, which only the thaw ends.
        let configuration = PostgresStore.Configuration(
            host: "127.0.0.1", port: cluster.port, username: cluster.username, password: cluster.password,
            database: "postgres", namespace: "paused", connectTimeout: .seconds(3), operationTimeout: .seconds(60))
        // The 3 s limit is for the frozen server below (see openServer).
        let (store, server) = try await Self.openServer(configuration)
        #expect(await server.send(.post, "/people", json: ["name": "ada"]).0.status == .created)
        cluster.pause()
        // Each answer must come while the database is still frozen: before, the time limit waited for the
        // cancelled query, which a frozen server never acknowledges, so the answer came only at the thaw.
        for request in [MockRequest(.get, "/people/1"), MockRequest(.post, "/people", json: ["name": "bob"])] {
            let status = await withTaskGroup(of: HTTPResponse.Status?.self) { group in
                group.addTask { await server.respond(to: request).status }
                group.addTask {
                    try? await Task.sleep(for: .seconds(45))
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            #expect(status == .serviceUnavailable, "\(request.method) \(request.path) while paused")
        }
        cluster.resume()
        var recovered = false
        for _ in 0..<150 where !recovered {
            recovered = await server.respond(to: MockRequest(.get, "/people/1")).status == .ok
            if !recovered { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(recovered)
        // The write answered 503 while paused did not land later.
        #expect(await server.send(.get, "/people").1?.arrayValue?.count == 1)
        try await store.close()
        try await cluster.remove()
    }

    @Test(
        "A server declaring a resource's parents otherwise than the store's records is refused; one without the children still nulls them"
    )
    func relationsAgreeAcrossServers() async throws {
        let namespace = Self.namespace()
        let first = try await Self.server(namespace: namespace)
        _ = await first.send(.post, "/people", json: ["name": "ada"])
        _ = await first.send(.post, "/people", json: ["name": "bob"])
        #expect(await first.send(.post, "/cars", json: ["name": "mini", "person_id": 1]).0.status == .created)
        // cars without a parent, over cars that have records: two sets of rules on one set of data.
        let plainCars = MockResource("cars", fields: ["name": .string, "color": .string, "person_id": .integer])
        let refused = try await PostgresStore.open(StoreKind.postgresConfiguration(namespace: namespace))
        await #expect(throws: StoreError.self) {
            _ = try await MockServer(resources: [Fixtures.people, plainCars], store: refused)
        }
        do {
            _ = try await MockServer(resources: [Fixtures.people, plainCars], store: refused)
        } catch let error as StoreError {
            #expect(error.description.contains("person_id → people"))
            #expect(error.description.contains("namespace"))
        }
        try await refused.close()
        // A server that serves people only: deleting a person still nulls the cars' references to it.
        let peopleOnly = try await MockServer(
            resources: [Fixtures.people],
            store: try await PostgresStore.open(StoreKind.postgresConfiguration(namespace: namespace)))
        #expect(await peopleOnly.send(.delete, "/people/1").0.status == .noContent)
        let car = await first.send(.get, "/cars/1").1
        #expect(car?["person_id"] == .null)
        #expect(await first.send(.get, "/people/2").0.status == .ok)
    }

    @Test(
        "A namespace PostgreSQL cannot take is refused before any connection, in a sentence",
        arguments: [
            "pg_mine", String(repeating: "n", count: 64), "",
        ])
    func namespaceNames(name: String) throws {
        let location = try #require(StoreLocation(parsing: "postgres://hammock@127.0.0.1:1/postgres"))
        let named = try #require(location.inNamespace(name))
        if name.isEmpty {
            // An empty one is the default namespace.
            #expect(try PostgresStore.Configuration(location: named).namespace == "public")
            return
        }
        #expect(throws: StoreError.self) { try PostgresStore.Configuration(location: named) }
        do {
            _ = try PostgresStore.Configuration(location: named)
        } catch {
            #expect(String(describing: error).contains("cannot be a PostgreSQL schema name"))
        }
    }
}

import HammockServer
import Testing

@Suite("Semantics (in process)")
struct ServerSemanticsTests {
    @Test("The reference's session: create john, list, update to jeff, delete", arguments: StoreKind.allCases)
    func referenceSession(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind)
        let (empty, list0) = await server.send(.get, "/people")
        #expect(empty.status == .ok && list0 == [])

        let (created, john) = await server.send(.post, "/people", json: ["name": "john", "numberOfKids": 1])
        #expect(created.status == .created)
        #expect(created.headerFields[.location] == "/people/1")
        #expect(john == ["id": 1, "name": "john", "numberOfKids": 1, "kilometersWalked": nil, "avatar": nil])
        #expect(john?.objectValue?.keys == ["id", "name", "numberOfKids", "kilometersWalked", "avatar"])

        let (_, list1) = await server.send(.get, "/people")
        #expect(list1 == [john ?? nil])

        let (updated, jeff) = await server.send(.put, "/people/1", json: ["name": "jeff"])
        #expect(updated.status == .ok)
        #expect(jeff == ["id": 1, "name": "jeff", "numberOfKids": 1, "kilometersWalked": nil, "avatar": nil])

        let (deleted, _) = await server.send(.delete, "/people/1")
        #expect(deleted.status == .noContent && deleted.body.isEmpty)
        #expect(await server.send(.get, "/people/1").0.status == .notFound)
    }

    @Test("Generated ids from clients are ignored; keys never change")
    func keys() async throws {
        let server = try await Fixtures.server()
        let (_, created) = await server.send(.post, "/people", json: ["id": 40, "name": "a"])
        #expect(created?["id"] == 1)
        let (same, _) = await server.send(.patch, "/people/1", json: ["id": 1, "name": "b"])
        #expect(same.status == .ok)
        let (changed, problem) = await server.send(.patch, "/people/1", json: ["id": 2, "name": "c"])
        #expect(changed.status == .unprocessableContent)
        #expect(problem?["errors"]?[0]?["field"] == "id")
        #expect(await server.send(.get, "/people/1").1?["name"] == "b")
    }

    @Test("PATCH and PUT merge; null clears a field", arguments: [HTTPRequest.Method.put, .patch])
    func merge(method: HTTPRequest.Method) async throws {
        let server = try await Fixtures.server()
        _ = await server.send(.post, "/people", json: ["name": "john", "numberOfKids": 2, "kilometersWalked": 1.5])
        let (_, merged) = await server.send(method, "/people/1", json: ["numberOfKids": nil, "kilometersWalked": 3])
        #expect(merged == ["id": 1, "name": "john", "numberOfKids": nil, "kilometersWalked": 3.0, "avatar": nil])
    }

    @Test("Nested routes list and create children; the path decides the parent", arguments: StoreKind.allCases)
    func nested(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind)
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        _ = await server.send(.post, "/people", json: ["name": "bob"])
        let (created, car) = await server.send(.post, "/people/2/cars", json: ["name": "mini", "person_id": 1])
        #expect(created.status == .created)
        #expect(car == ["id": 1, "name": "mini", "color": nil, "person_id": 2])
        _ = await server.send(.post, "/cars", json: ["name": "beetle", "person_id": 1])
        #expect(await server.send(.get, "/people/2/cars").1 == [car ?? nil])
        #expect(await server.send(.get, "/people/1/cars").1?.arrayValue?.count == 1)
        #expect(await server.send(.get, "/people/9/cars").0.status == .notFound)
        let (orphan, _) = await server.send(.post, "/people/9/cars", json: ["name": "x"])
        #expect(orphan.status == .notFound)
        #expect(await server.send(.get, "/cars").1?.arrayValue?.count == 2)
    }

    @Test("Foreign keys in bodies must point at an existing parent")
    func foreignKeyCheck() async throws {
        let server = try await Fixtures.server()
        let (response, problem) = await server.send(.post, "/cars", json: ["name": "x", "person_id": 5])
        #expect(response.status == .unprocessableContent)
        #expect(problem?["errors"]?[0]?["field"] == "person_id")
        #expect(await server.send(.get, "/cars").1 == [])
    }

    @Test("Deleting a parent sets its children's foreign key to null")
    func orphaning() async throws {
        let server = try await Fixtures.server()
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        _ = await server.send(.post, "/people/1/cars", json: ["name": "mini"])
        #expect(await server.send(.delete, "/people/1").0.status == .noContent)
        #expect(await server.send(.get, "/cars/1").1?["person_id"] == .null)
    }

    @Test("Ids are never reused after deletes")
    func noReuse() async throws {
        let server = try await Fixtures.server()
        for name in ["a", "b", "c"] { _ = await server.send(.post, "/people", json: ["name": .string(name)]) }
        _ = await server.send(.delete, "/people/3")
        #expect(await server.send(.post, "/people", json: ["name": "d"]).1?["id"] == 4)
    }

    @Test("A trailing slash is accepted")
    func trailingSlash() async throws {
        let server = try await Fixtures.server()
        #expect(await server.send(.post, "/people/", json: ["name": "a"]).0.status == .created)
        #expect(await server.send(.get, "/people/1/").1?["name"] == "a")
        #expect(await server.send(.get, "/people/1/cars/").0.status == .ok)
    }

    @Test("Client-supplied string keys: required, unique, addressable, percent-decoded")
    func stringKeys() async throws {
        let server = try await Fixtures.server(resources: [Fixtures.categories, Fixtures.products])
        let (missing, _) = await server.send(.post, "/categories", json: ["title": "Tools"])
        #expect(missing.status == .unprocessableContent)
        let (created, _) = await server.send(.post, "/categories", json: ["slug": "home & garden", "title": "G"])
        #expect(created.status == .created)
        #expect(created.headerFields[.location] == "/categories/home%20%26%20garden")
        #expect(await server.send(.post, "/categories", json: ["slug": "home & garden"]).0.status == .conflict)
        #expect(await server.send(.get, "/categories/home%20%26%20garden").1?["title"] == "G")
        let (product, _) = await server.send(.post, "/categories/home%20%26%20garden/products", json: ["name": "h"])
        #expect(product.status == .created)
        #expect(await server.send(.get, "/products/1").1?["category_id"] == "home & garden")
    }

    @Test(
        "A key in another Unicode spelling names no record: DELETE and PATCH of it are 404 and the others are untouched",
        arguments: StoreKind.allCases)
    func otherSpellingOfKey(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind, resources: [Fixtures.categories, Fixtures.products])
        for slug in ["a", "\u{E9}", "f"] {
            #expect(
                await server.send(.post, "/categories", json: ["slug": .string(slug), "title": .string(slug)]).0.status
                    == .created)
        }
        // "e" with a combining accent: the same text as "é" to Swift's ==, other bytes in the URL.
        #expect(await server.send(.delete, "/categories/e%CC%81").0.status == .notFound)
        #expect(await server.send(.patch, "/categories/e%CC%81", json: ["title": "x"]).0.status == .notFound)
        let (_, list) = await server.send(.get, "/categories")
        let titles = list?.arrayValue?.compactMap { $0["title"]?.stringValue.map { Array($0.utf8) } }
        #expect(titles == [Array("a".utf8), Array("f".utf8), Array("\u{E9}".utf8)])
        #expect(await server.send(.get, "/categories/%C3%A9").1?["title"]?.stringValue.map { Array($0.utf8) } == [0xC3, 0xA9])
    }

    @Test("Blobs travel as base64; dates and JSON fields are kept")
    func fieldTypes() async throws {
        let server = try await Fixtures.server(resources: [Fixtures.people, Fixtures.categories, Fixtures.products])
        let (_, person) = await server.send(.post, "/people", json: ["avatar": "iVBORw0KGgo="])
        #expect(person?["avatar"] == "iVBORw0KGgo=")
        let (_, product) = await server.send(
            .post, "/products", json: ["releasedOn": "2024-05-01", "details": ["a": [1, 2.5]], "price": 3, "inStock": true])
        #expect(product?["releasedOn"] == "2024-05-01")
        #expect(product?["details"] == ["a": [1, 2.5]])
        #expect(product?["price"] == .double(3))
    }

    @Test("Allowed actions limit the routes; others answer 405 with Allow")
    func actions() async throws {
        let readOnly = MockResource("notes", fields: ["text": .string], actions: .readOnly)
        let server = try await Fixtures.server(resources: [readOnly])
        let (response, problem) = await server.send(.post, "/notes", json: ["text": "x"])
        #expect(response.status == .methodNotAllowed)
        #expect(response.headerFields[.allow] == "GET, HEAD")
        #expect(problem?["status"] == 405)
        #expect(await server.send(.delete, "/notes/1").0.headerFields[.allow] == "GET, HEAD")
    }

    @Test("Lists are ordered by primary key")
    func listOrder() async throws {
        let server = try await Fixtures.server(resources: [Fixtures.categories])
        for slug in ["pears", "apples", "melons"] { _ = await server.send(.post, "/categories", json: ["slug": .string(slug)]) }
        let slugs = await server.send(.get, "/categories").1?.arrayValue?.compactMap { $0["slug"]?.stringValue }
        #expect(slugs == ["apples", "melons", "pears"])
    }

    @Test("HEAD answers like GET without a body; OPTIONS lists methods and CORS headers")
    func headAndOptions() async throws {
        let server = try await Fixtures.server()
        _ = await server.send(.post, "/people", json: ["name": "a"])
        let get = await server.respond(to: MockRequest(.get, "/people/1"))
        let head = await server.respond(to: MockRequest(.head, "/people/1"))
        #expect(head.status == .ok && head.body.isEmpty)
        #expect(head.headerFields[.contentLength] == String(get.body.count))
        let options = await server.respond(
            to: MockRequest(.options, "/people", headerFields: [.accessControlRequestHeaders: "X-Token"]))
        #expect(options.status == .noContent)
        #expect(options.headerFields[.allow] == "GET, HEAD, POST, OPTIONS")
        #expect(options.headerFields[.accessControlAllowOrigin] == "*")
        #expect(options.headerFields[.accessControlAllowHeaders] == "X-Token")
        #expect(options.headerFields[.accessControlAllowMethods] == "GET, HEAD, POST, OPTIONS")
    }

    @Test("A preflight lists only the methods the route allows")
    func preflightMethods() async throws {
        let readOnly = MockResource("notes", fields: ["text": .string], actions: .readOnly)
        let server = try await Fixtures.server(resources: [Fixtures.people, readOnly])
        let item = await server.respond(to: MockRequest(.options, "/people/1"))
        #expect(item.headerFields[.accessControlAllowMethods] == "GET, HEAD, PUT, PATCH, DELETE, OPTIONS")
        let notes = await server.respond(to: MockRequest(.options, "/notes"))
        #expect(notes.headerFields[.accessControlAllowMethods] == "GET, HEAD, OPTIONS")
        let unknown = await server.respond(to: MockRequest(.options, "/nothing"))
        #expect(unknown.status == .notFound)
        #expect(unknown.headerFields[.accessControlAllowMethods] == nil)
    }

    @Test("Resources can be added while the server runs")
    func addWhileRunning() async throws {
        let server = try await Fixtures.server(resources: [Fixtures.people])
        #expect(await server.send(.get, "/cars").0.status == .notFound)
        try await server.addResource(Fixtures.cars)
        #expect(await server.send(.get, "/cars").0.status == .ok)
        #expect(await server.send(.get, "/people/1/cars").0.status == .notFound)  // no person 1 yet
        await #expect(throws: SchemaError.self) { try await server.addResource(Fixtures.cars) }
    }

    @Test("Bad resource definitions are refused with a reason")
    func schemaErrors() async throws {
        let cases: [(MockResource, String)] = [
            (MockResource("a/b", fields: ["x": .string]), "non-empty path segment"),
            (MockResource("things", fields: ["x": .string], primaryKey: "x2", parents: ["nowhere"]), "not a known resource"),
            (MockResource("things", fields: ["key": .float], primaryKey: "key"), "must be a string or integer"),
            (MockResource("things", fields: ["person_id": .string], parents: ["people"]), "clashes"),
            (
                MockResource("things", fields: [MockResource.Field("x", .string), MockResource.Field("x", .integer)]),
                "declared twice"
            ),
        ]
        for (resource, message) in cases {
            let server = try await Fixtures.server(resources: [Fixtures.people])
            do {
                try await server.addResource(resource)
                Issue.record("expected \(resource.name) to be refused")
            } catch let error as SchemaError {
                #expect(error.description.contains(message), "\(error)")
            }
        }
        await #expect(throws: SchemaError.self) {
            try await MockServer(resources: [
                MockResource("a", fields: [:], parents: ["b"]), MockResource("b", fields: [:], parents: ["a"]),
            ])
        }
    }

    @Test("Foreign key names come from the singular parent name, or are given")
    func foreignKeyNames() {
        #expect(MockResource.Parent("people").foreignKey == "person_id")
        #expect(MockResource.Parent("categories").foreignKey == "category_id")
        #expect(MockResource.Parent("boxes").foreignKey == "box_id")
        #expect(MockResource.Parent("addresses").foreignKey == "address_id")
        #expect(MockResource.Parent("cars").foreignKey == "car_id")
        #expect(MockResource.Parent("status").foreignKey == "status_id")
        #expect(MockResource.Parent("people", foreignKey: "owner").foreignKey == "owner")
    }

    @available(*, deprecated, message: "uses the deprecated name on purpose")
    @Test("The old name Resource still defines a server resource, for one release")
    func oldName() async throws {
        let notes: Resource = Resource("notes", fields: ["text": .string])
        let server = try await MockServer(resources: [notes])
        #expect(await server.respond(to: MockRequest(.post, "/notes", json: ["text": "hi"])).status == .created)
    }
}

import Foundation
import HammockClient
import HammockJSON
import HammockModel
import HammockResources
import HammockTesting
import Testing

struct User: Decodable, Equatable, Sendable {
    var id: Int
    var name: String
    static let empty = User(id: 0, name: "")
}

struct Person: Equatable, Sendable {
    var name = ""
    var city = ""
}

@MainActor
@Suite("The response pipeline")
struct PipelineTests {
    let backend = ScriptedBackend()
    let api: Service

    init() throws {
        api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: ManualClock())
    }

    @Test("the standard pipeline gives JSON for JSON types, text for text, bytes for the rest")
    func standard() async {
        backend.script(
            .json(["a": 1]),
            .init(headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array("héllo".utf8)),
            .init(headers: [("Content-Type", "image/png")], body: [0x89, 0x50]),
            .init(headers: [("Content-Type", "application/vnd.api+json")], body: Array("[1]".utf8)))
        let json = api.resource("/json")
        _ = await json.load().response()
        #expect(json.latestData?.jsonContent == ["a": 1])
        let text = api.resource("/text")
        _ = await text.load().response()
        #expect(text.latestData?.typedContent(as: String.self) == "héllo")
        #expect(text.latestData?.charset == "utf-8")
        let image = api.resource("/image")
        _ = await image.load().response()
        #expect(image.latestData?.typedContent(as: [UInt8].self) == [0x89, 0x50])
        let suffixed = api.resource("/suffixed")
        _ = await suffixed.load().response()
        #expect(suffixed.latestData?.jsonContent == [1])
    }

    @Test("text in Latin-1, Windows-1252 or UTF-16 becomes a String; an unknown charset stays bytes and the load succeeds")
    func charsets() async {
        backend.script(
            .init(headers: [("Content-Type", "text/plain; charset=windows-1252")], body: [0x80, 0x20, 0xE9]),
            .init(headers: [("Content-Type", "text/plain; charset=UTF-16LE")], body: [0x68, 0x00, 0x69, 0x00]),
            .init(headers: [("Content-Type", "text/plain; charset=shift_jis")], body: [0x82, 0xA0]),
            .init(headers: [("Content-Type", "text/plain; charset=utf-8")], body: [0xC3, 0x28]))
        let euro = api.resource("/cp1252")
        _ = await euro.load().response()
        #expect(euro.latestData?.typedContent(as: String.self) == "€ é")
        let utf16 = api.resource("/utf16")
        _ = await utf16.load().response()
        #expect(utf16.latestData?.typedContent(as: String.self) == "hi")
        for path in ["/sjis", "/broken"] {
            let other = api.resource(path)
            _ = await other.load().response()
            #expect(other.latestError == nil, "\(path)")
            #expect(other.latestData?.typedContent(as: [UInt8].self) != nil, "\(path)")
        }
    }

    @Test("a Decodable model per pattern, read with typedContent()")
    func decodable() async {
        api.configure("/users/*") { $0.pipeline[.model] = [.decoding(User.self)] }
        backend.setFallback(.json(["id": 7, "name": "Ada"]))
        let user = api.resource("/users/7")
        #expect(user.latestData.typedContent(ifNone: User.empty) == User.empty)
        _ = await user.load().response()
        #expect(user.latestData.typedContent(ifNone: User.empty) == User(id: 7, name: "Ada"))
        #expect(user.latestData?.typedContent(as: User.self)?.name == "Ada")
        let other = api.resource("/other")
        _ = await other.load().response()
        #expect(other.latestData?.typedContent(as: User.self) == nil)  // not configured there
        #expect(other.latestData?.jsonContent?["name"] == "Ada")
    }

    @Test("a HammockModel recipe maps objects and arrays")
    func recipe() async throws {
        let recipe = try Recipe<Person> {
            Field("name", \.name, at: "name")
            Field("city", \.city, at: "address.city")
        }
        api.configure("/people/**") { $0.pipeline[.model] = [.recipe(recipe, base: Person())] }
        backend.script(
            .json(["name": "Ada", "address": ["city": "London"]]),
            .json([["name": "Grace", "address": ["city": "New York"]]]))
        let ada = api.resource("/people/1")
        _ = await ada.load().response()
        #expect(ada.latestData?.typedContent(as: Person.self) == Person(name: "Ada", city: "London"))
        let list = api.resource("/people")
        _ = await list.load().response()
        #expect(list.latestData?.typedContent(as: [Person].self) == [Person(name: "Grace", city: "New York")])
    }

    @Test("a body the pipeline cannot read is an error that says why, and the old data stays")
    func pipelineFailure() async {
        api.configure { $0.pipeline[.model] = [.decoding(User.self)] }
        backend.script(
            .json(["id": 1, "name": "Ada"]),
            .init(headers: [("Content-Type", "application/json")], body: Array("{\"id\": ".utf8)),
            .json(["id": "not a number", "name": "Ada"]))
        let user = api.resource("/users/1")
        _ = await user.load().response()
        _ = await user.load().response()
        guard case .pipeline? = user.latestError?.cause else {
            Issue.record("expected a pipeline error, got \(String(describing: user.latestError))")
            return
        }
        #expect(user.latestError?.userMessage.contains("not valid JSON") == true)
        #expect(user.latestError?.status == .ok)
        _ = await user.load().response()
        #expect(user.latestError?.userMessage.hasPrefix("The response could not be read") == true)
        #expect(user.latestData?.typedContent(as: User.self) == User(id: 1, name: "Ada"))
    }

    @Test("custom transformers run in stage order and only on matching types")
    func customStages() async {
        api.configure {
            $0.pipeline[.cleanup] = [.content(JSON.self) { json in json["payload"] ?? .null }]
            $0.pipeline[.rawData] = [
                ResponseTransformer(contentTypes: ["application/json"]) { entity in
                    // Strip an anti-hijacking prefix before the JSON parser sees the bytes.
                    let prefix = Array(")]}'\n".utf8)
                    var entity = entity
                    if entity.bytes.starts(with: prefix) { entity.bytes.removeFirst(prefix.count) }
                    return entity
                }
            ]
        }
        backend.setFallback(
            .init(headers: [("Content-Type", "application/json")], body: Array(")]}'\n{\"payload\": [1, 2]}".utf8)))
        let guarded = api.resource("/guarded")
        _ = await guarded.load().response()
        #expect(guarded.latestData?.jsonContent == [1, 2])
    }

    @Test(
        "media type patterns",
        arguments: [
            ("application/json", "*/json", true),
            ("application/problem+json", "*/*+json", true),
            ("application/json", "*/*+json", false),
            ("text/html", "text/*", true),
            ("image/png", "text/*", false),
            ("anything/at-all", "*/*", true),
        ])
    func mediaTypes(type: String, pattern: String, expected: Bool) {
        #expect(ResponseTransformer(contentTypes: [pattern]) { $0 }.accepts(type) == expected)
    }
}

import Foundation
import HTTPTypes
import HammockJSON
import Logging
import Synchronization

extension MockServer {
    /// Answers a request without any socket: the same routing, validation, storage, serializers,
    /// controller and latency as over HTTP. Never throws: every failure becomes a problem response.
    ///
    /// ```swift
    /// let created = await server.respond(to: MockRequest(.post, "/people", json: ["name": "john"]))
    /// #expect(created.status == .created)
    /// ```
    public func respond(to request: MockRequest) async -> MockResponse {
        let waitUntil = options.latency == nil ? nil : timer.markArrival()
        var response = await dispatch(request)
        if options.allowsCrossOrigin { Self.addCrossOriginFields(to: &response, for: request) }
        if let latency = options.latency, let waitUntil {
            let delay = latency.delay(forUnit: random())
            let stopSignal = self.stopSignal
            // Whichever comes first: the delay, or the server stopping.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await waitUntil(delay) }
                group.addTask { await stopSignal.wait() }
                await group.next()
                group.cancelAll()
            }
        }
        logger.info("\(request.method.rawValue) \(request.path) \(response.status.code)")
        return response
    }

    func dispatch(_ request: MockRequest) async -> MockResponse {
        do {
            let (route, serializer, schemas) = try registry.withLock { registry throws(HTTPProblem) in
                let route = try registry.route(forPath: request.path)
                return (route, registry.serializers[route.schema.name] ?? defaultSerializer, registry.schemas)
            }
            if request.method == .options {
                var fields = HTTPFields()
                fields[.allow] = (route.allowedMethods + [.options]).map(\.rawValue).joined(separator: ", ")
                return MockResponse(status: .noContent, headerFields: fields)
            }
            guard let action = route.action(for: request.method) else {
                throw HTTPProblem.methodNotAllowed(request.method, allowed: route.allowedMethods)
            }
            var parameters: JSONObject?
            var encoding = BodyEncoding.json
            if action == .create || action == .update {
                let (body, bodyEncoding) = try RequestBody.decode(request, limit: options.maximumBodySize)
                parameters = try serializer.parameters(fromBody: body, for: route.schema.resource)
                encoding = bodyEncoding
            }
            let actionRequest = ActionRequest(
                schema: route.schema, route: route, request: request, parameters: parameters, bodyEncoding: encoding,
                store: store, serializer: serializer, schemas: schemas)
            var response: MockResponse
            switch action {
            case .index: response = try await controller.index(actionRequest)
            case .show: response = try await controller.show(actionRequest)
            case .create: response = try await controller.create(actionRequest)
            case .update: response = try await controller.update(actionRequest)
            case .destroy: response = try await controller.destroy(actionRequest)
            }
            if action == .index || action == .show {
                ConditionalRequests.apply(to: &response, request: request, lastModified: lastModified(of: route), now: now())
            } else if (200...299).contains(response.status.code) {
                recordModification(of: route.schema, cascadingTo: action == .destroy ? Array(schemas.values) : [])
            }
            if request.method == .head {
                response.headerFields[.contentLength] = String(response.body.count)
                response.body = []
            }
            return response
        } catch let problem as HTTPProblem {
            return problem.response
        } catch let error as StoreError {
            logger.error("store failure: \(error)")
            return HTTPProblem(.internalServerError, detail: "The store failed: \(error.description)").response
        } catch {
            logger.error("request failed: \(error)")
            return HTTPProblem(.internalServerError, detail: String(describing: error)).response
        }
    }

    /// When the data behind `route` last changed (the parent's too, for nested lists).
    func lastModified(of route: Route) -> Date {
        modifications.withLock { changes in
            var latest = changes[route.schema.name] ?? createdAt
            if case .children(_, let parent, _, _) = route, let parentChange = changes[parent.name] {
                latest = max(latest, parentChange)
            }
            return latest
        }
    }

    /// Notes a change to `schema`, and to the children whose foreign keys a delete may have cleared.
    func recordModification(of schema: ResourceSchema, cascadingTo candidates: [ResourceSchema] = []) {
        let time = now()
        let children = candidates.filter { $0.foreignKey(toParent: schema.name) != nil }.map(\.name)
        modifications.withLock { changes in
            for name in [schema.name] + children { changes[name] = max(changes[name] ?? time, time) }
        }
    }

    static func addCrossOriginFields(to response: inout MockResponse, for request: MockRequest) {
        response.headerFields[.accessControlAllowOrigin] = "*"
        response.headerFields[.accessControlExposeHeaders] = "Location, ETag, Last-Modified"
        if request.method == .options {
            // The route's own methods (an unknown route has none, and its preflight fails).
            response.headerFields[.accessControlAllowMethods] = response.headerFields[.allow]
            response.headerFields[.accessControlAllowHeaders] =
                request.headerFields[.accessControlRequestHeaders] ?? "Content-Type"
            response.headerFields[.accessControlMaxAge] = "600"
        }
    }
}

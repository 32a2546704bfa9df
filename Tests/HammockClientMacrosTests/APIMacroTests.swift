import HammockClientMacros
import MacroTesting
import Testing

@Suite(
    .macros(
        [
            "API": APIMacro.self, "GET": MarkerMacro.self, "POST": MarkerMacro.self, "PUT": MarkerMacro.self,
            "PATCH": MarkerMacro.self, "DELETE": MarkerMacro.self, "HEAD": MarkerMacro.self, "Body": MarkerMacro.self,
            "Headers": MarkerMacro.self, "FormURLEncoded": MarkerMacro.self, "Multipart": MarkerMacro.self,
            "ErrorBody": MarkerMacro.self, "Invalidates": MarkerMacro.self, "HeaderMap": MarkerMacro.self,
        ]
    )
)
struct APIMacroTests {
    @Test("The issue's GitHub example expands to plain calls on the runtime")
    func gitHub() {
        assertMacro {
            #"""
            @API
            protocol GitHub: Sendable {
                @GET("/users/{user}/repos")
                func listRepos(user: String, sort: String?) async throws -> [Repo]

                @POST("/repos/{owner}/{repo}/issues")
                @Body("issue")
                func createIssue(owner: String, repo: String, issue: NewIssue) async throws -> Issue

                @Headers(["Accept": "application/vnd.github+json", "If-None-Match": "{etag}"])
                @GET("/user")
                func me(etag: String?) async throws -> Response<User>

                @FormURLEncoded
                @POST("/oauth/token")
                func token(grant_type: String, username: String, password: String) async throws -> Token

                @Multipart
                @POST("/upload")
                func upload(description: String, photo: FilePart) async throws
            }
            """#
        } expansion: {
            """
            protocol GitHub: Sendable {
                func listRepos(user: String, sort: String?) async throws -> [Repo]
                func createIssue(owner: String, repo: String, issue: NewIssue) async throws -> Issue
                func me(etag: String?) async throws -> Response<User>
                func token(grant_type: String, username: String, password: String) async throws -> Token
                func upload(description: String, photo: FilePart) async throws
            }

            /// The client `@API` generated for `GitHub`.
            struct GitHubClient: GitHub {
                /// The client every request goes through.
                let client: RestClient

                /// The request of each method, built but not sent: what a typed resource loads
                /// (`service.resource(client.endpoints.method(…))`).
                let endpoints = Endpoints()

                /// A client sending requests through `client`.
                init(client: RestClient) {
                    self.client = client
                }

                func listRepos(user: String, sort: String?) async throws -> [Repo] {
                    return try await client.result(of: self.endpoints.listRepos(user: user, sort: sort).request)
                }

                func createIssue(owner: String, repo: String, issue: NewIssue) async throws -> Issue {
                    return try await client.result(of: self.endpoints.createIssue(owner: owner, repo: repo, issue: issue).request)
                }

                func me(etag: String?) async throws -> Response<User> {
                    return try await client.result(of: self.endpoints.me(etag: etag).request)
                }

                func token(grant_type: String, username: String, password: String) async throws -> Token {
                    return try await client.result(of: self.endpoints.token(grant_type: grant_type, username: username, password: password).request)
                }

                func upload(description: String, photo: FilePart) async throws {
                    return try await client.result(of: self.endpoints.upload(description: description, photo: photo).request)
                }

                /// Builds the request of each of `GitHub`'s methods.
                struct Endpoints: Sendable {
                    func listRepos(user: String, sort: String?) -> Endpoint<[Repo]> {
                        var request = RequestBuilder(.get, "/users/{user}/repos")
                        request.setPathValue(user, for: "user")
                        request.addQuery("sort", sort)
                        return Endpoint(request)
                    }

                    func createIssue(owner: String, repo: String, issue: NewIssue) -> Endpoint<Issue> {
                        var request = RequestBuilder(.post, "/repos/{owner}/{repo}/issues")
                        request.setPathValue(owner, for: "owner")
                        request.setPathValue(repo, for: "repo")
                        request.setBody(issue)
                        return Endpoint(request)
                    }

                    func me(etag: String?) -> Endpoint<Response<User>> {
                        var request = RequestBuilder(.get, "/user")
                        request.setHeader("Accept", "application/vnd.github+json")
                        request.setHeader("If-None-Match", etag)
                        return Endpoint(request)
                    }

                    func token(grant_type: String, username: String, password: String) -> Endpoint<Token> {
                        var request = RequestBuilder(.post, "/oauth/token")
                        request.addFormField("grant_type", grant_type)
                        request.addFormField("username", username)
                        request.addFormField("password", password)
                        return Endpoint(request)
                    }

                    func upload(description: String, photo: FilePart) -> Endpoint<Void> {
                        var request = RequestBuilder(.post, "/upload")
                        request.addPart("description", description)
                        request.addPart("photo", photo)
                        return Endpoint(request)
                    }
                }
            }

            /// A stand-in for `GitHub` that `@API` generated: set each method's answer on `on`, and read
            /// the calls it received there (`mock.on.method.returns(value)`, `mock.on.method.calls`).
            final class GitHubMock: GitHub, Sendable {
                /// Each method's answer and calls.
                let on = Methods()

                /// A mock with no answers set: a call throws `UnansweredMockCall` until its answer is.
                init() {
                }

                func listRepos(user: String, sort: String?) async throws -> [Repo] {
                    try await self.on.listRepos.call((user: user, sort: sort))
                }

                func createIssue(owner: String, repo: String, issue: NewIssue) async throws -> Issue {
                    try await self.on.createIssue.call((owner: owner, repo: repo, issue: issue))
                }

                func me(etag: String?) async throws -> Response<User> {
                    try await self.on.me.call(etag)
                }

                func token(grant_type: String, username: String, password: String) async throws -> Token {
                    try await self.on.token.call((grant_type: grant_type, username: username, password: password))
                }

                func upload(description: String, photo: FilePart) async throws {
                    try await self.on.upload.call((description: description, photo: photo))
                }

                /// The answers and calls of `GitHubMock`'s methods.
                struct Methods: Sendable {
                    /// `listRepos(user:sort:)`.
                    let listRepos = MockMethod<(user: String, sort: String?), [Repo]>("listRepos(user:sort:)")

                    /// `createIssue(owner:repo:issue:)`.
                    let createIssue = MockMethod<(owner: String, repo: String, issue: NewIssue), Issue>("createIssue(owner:repo:issue:)")

                    /// `me(etag:)`.
                    let me = MockMethod<String?, Response<User>>("me(etag:)")

                    /// `token(grant_type:username:password:)`.
                    let token = MockMethod<(grant_type: String, username: String, password: String), Token>("token(grant_type:username:password:)")

                    /// `upload(description:photo:)`.
                    let upload = MockMethod<(description: String, photo: FilePart), Void>("upload(description:photo:)")
                }
            }
            """
        }
    }

    @Test("Public protocols get public clients; labels are wire names; static queries and results of every kind")
    func publicAndResults() {
        assertMacro {
            #"""
            @API
            @Headers(["User-Agent": "Hammock", "Authorization": "Bearer {token}"])
            @ErrorBody(APIError.self)
            public protocol Store {
                @GET("/search?type=all")
                func search(q query: String, _ page: Int, tags: [String]) async throws -> [Item]?

                @DELETE("/items/{id}")
                func delete(id: Int, token: String?) async throws -> Void

                @HEAD("/items/{id}.{format}")
                func exists(id: Int, format: Format, token: String?) async throws -> Data

                @GET("/items/{id}/export")
                func export(id: Int) async throws -> DownloadedFile

                @PATCH("/items/{id}")
                @Body("changes")
                func update(id: Int, changes: JSON, token: String?) async throws -> Optional<Item>
            }
            """#
        } expansion: {
            #"""
            public protocol Store {
                func search(q query: String, _ page: Int, tags: [String]) async throws -> [Item]?
                func delete(id: Int, token: String?) async throws -> Void
                func exists(id: Int, format: Format, token: String?) async throws -> Data
                func export(id: Int) async throws -> DownloadedFile
                func update(id: Int, changes: JSON, token: String?) async throws -> Optional<Item>
            }

            /// The client `@API` generated for `Store`.
            public struct StoreClient: Store {
                /// The client every request goes through.
                public let client: RestClient

                /// The request of each method, built but not sent: what a typed resource loads
                /// (`service.resource(client.endpoints.method(…))`).
                public let endpoints = Endpoints()

                /// A client sending requests through `client`.
                public init(client: RestClient) {
                    self.client = client
                }

                public func search(q query: String, _ page: Int, tags: [String]) async throws -> [Item]? {
                    do {
                        return try await client.result(of: self.endpoints.search(q: query, page, tags: tags).request)
                    } catch {
                        throw client.attachingErrorBody(to: error, as: APIError.self)
                    }
                }

                public func delete(id: Int, token: String?) async throws -> Void {
                    do {
                        return try await client.result(of: self.endpoints.delete(id: id, token: token).request)
                    } catch {
                        throw client.attachingErrorBody(to: error, as: APIError.self)
                    }
                }

                public func exists(id: Int, format: Format, token: String?) async throws -> Data {
                    do {
                        return try await client.result(of: self.endpoints.exists(id: id, format: format, token: token).request)
                    } catch {
                        throw client.attachingErrorBody(to: error, as: APIError.self)
                    }
                }

                public func export(id: Int) async throws -> DownloadedFile {
                    do {
                        return try await client.result(of: self.endpoints.export(id: id).request)
                    } catch {
                        throw client.attachingErrorBody(to: error, as: APIError.self)
                    }
                }

                public func update(id: Int, changes: JSON, token: String?) async throws -> Optional<Item> {
                    do {
                        return try await client.result(of: self.endpoints.update(id: id, changes: changes, token: token).request)
                    } catch {
                        throw client.attachingErrorBody(to: error, as: APIError.self)
                    }
                }

                /// Builds the request of each of `Store`'s methods.
                public struct Endpoints: Sendable {
                    public init() {
                    }

                    public func search(q query: String, _ page: Int, tags: [String]) -> Endpoint<[Item]?> {
                        var request = RequestBuilder(.get, "/search?type=all")
                        request.setHeader("User-Agent", "Hammock")
                        request.addQuery("q", query)
                        request.addQuery("page", page)
                        request.addQuery("tags", tags)
                        return Endpoint(request)
                    }

                    public func delete(id: Int, token: String?) -> Endpoint<Void> {
                        var request = RequestBuilder(.delete, "/items/{id}")
                        request.setHeader("User-Agent", "Hammock")
                        if !token.parameterStrings.isEmpty {
                            request.setHeader("Authorization", "Bearer \(token.parameterStrings.joined(separator: ", "))")
                        }
                        request.setPathValue(id, for: "id")
                        return Endpoint(request)
                    }

                    public func exists(id: Int, format: Format, token: String?) -> Endpoint<Data> {
                        var request = RequestBuilder(.head, "/items/{id}.{format}")
                        request.setHeader("User-Agent", "Hammock")
                        if !token.parameterStrings.isEmpty {
                            request.setHeader("Authorization", "Bearer \(token.parameterStrings.joined(separator: ", "))")
                        }
                        request.setPathValue(id, for: "id")
                        request.setPathValue(format, for: "format")
                        return Endpoint(request)
                    }

                    public func export(id: Int) -> Endpoint<DownloadedFile> {
                        var request = RequestBuilder(.get, "/items/{id}/export")
                        request.setHeader("User-Agent", "Hammock")
                        request.setPathValue(id, for: "id")
                        return Endpoint(request)
                    }

                    public func update(id: Int, changes: JSON, token: String?) -> Endpoint<Optional<Item>> {
                        var request = RequestBuilder(.patch, "/items/{id}")
                        request.setHeader("User-Agent", "Hammock")
                        if !token.parameterStrings.isEmpty {
                            request.setHeader("Authorization", "Bearer \(token.parameterStrings.joined(separator: ", "))")
                        }
                        request.setPathValue(id, for: "id")
                        request.setBody(changes)
                        return Endpoint(request)
                    }
                }
            }

            /// A stand-in for `Store` that `@API` generated: set each method's answer on `on`, and read
            /// the calls it received there (`mock.on.method.returns(value)`, `mock.on.method.calls`).
            public final class StoreMock: Store, Sendable {
                /// Each method's answer and calls.
                public let on = Methods()

                /// A mock with no answers set: a call throws `UnansweredMockCall` until its answer is.
                public init() {
                }

                public func search(q query: String, _ page: Int, tags: [String]) async throws -> [Item]? {
                    try await self.on.search.call((query: query, page: page, tags: tags))
                }

                public func delete(id: Int, token: String?) async throws -> Void {
                    try await self.on.delete.call((id: id, token: token))
                }

                public func exists(id: Int, format: Format, token: String?) async throws -> Data {
                    try await self.on.exists.call((id: id, format: format, token: token))
                }

                public func export(id: Int) async throws -> DownloadedFile {
                    try await self.on.export.call(id)
                }

                public func update(id: Int, changes: JSON, token: String?) async throws -> Optional<Item> {
                    try await self.on.update.call((id: id, changes: changes, token: token))
                }

                /// The answers and calls of `StoreMock`'s methods.
                public struct Methods: Sendable {
                    /// `search(q:_:tags:)`.
                    public let search = MockMethod<(query: String, page: Int, tags: [String]), [Item]?>("search(q:_:tags:)")

                    /// `delete(id:token:)`.
                    public let delete = MockMethod<(id: Int, token: String?), Void>("delete(id:token:)")

                    /// `exists(id:format:token:)`.
                    public let exists = MockMethod<(id: Int, format: Format, token: String?), Data>("exists(id:format:token:)")

                    /// `export(id:)`.
                    public let export = MockMethod<Int, DownloadedFile>("export(id:)")

                    /// `update(id:changes:token:)`.
                    public let update = MockMethod<(id: Int, changes: JSON, token: String?), Optional<Item>>("update(id:changes:token:)")
                }
            }
            """#
        }
    }

    @Test("@API on something other than a protocol")
    func notAProtocol() {
        assertMacro {
            """
            @API
            struct GitHub {}
            """
        } diagnostics: {
            """
            @API
            ┬───
            ╰─ 🛑 @API can only be applied to a protocol
            struct GitHub {}
            """
        }
    }

    @Test("A method that is not async throws gets a fix-it")
    func notAsyncThrows() {
        assertMacro {
            """
            @API
            protocol Users {
                @GET("/users")
                func list() -> [User]
            }
            """
        } diagnostics: {
            """
            @API
            protocol Users {
                @GET("/users")
                func list() -> [User]
                         ┬───────────
                         ╰─ 🛑 'list' must be 'async throws': every call goes over the network and can fail
                            ✏️ add 'async throws'
            }
            """
        } fixes: {
            """
            @API
            protocol Users {
                @GET("/users")
                func list() async throws -> [User]
            }
            """
        } expansion: {
            """
            protocol Users {
                func list() async throws -> [User]
            }

            /// The client `@API` generated for `Users`.
            struct UsersClient: Users {
                /// The client every request goes through.
                let client: RestClient

                /// The request of each method, built but not sent: what a typed resource loads
                /// (`service.resource(client.endpoints.method(…))`).
                let endpoints = Endpoints()

                /// A client sending requests through `client`.
                init(client: RestClient) {
                    self.client = client
                }

                func list() async throws -> [User] {
                    return try await client.result(of: self.endpoints.list().request)
                }

                /// Builds the request of each of `Users`'s methods.
                struct Endpoints: Sendable {
                    func list() -> Endpoint<[User]> {
                        let request = RequestBuilder(.get, "/users")
                        return Endpoint(request)
                    }
                }
            }

            /// A stand-in for `Users` that `@API` generated: set each method's answer on `on`, and read
            /// the calls it received there (`mock.on.method.returns(value)`, `mock.on.method.calls`).
            final class UsersMock: Users, Sendable {
                /// Each method's answer and calls.
                let on = Methods()

                /// A mock with no answers set: a call throws `UnansweredMockCall` until its answer is.
                init() {
                }

                func list() async throws -> [User] {
                    try await self.on.list.call(())
                }

                /// The answers and calls of `UsersMock`'s methods.
                struct Methods: Sendable {
                    /// `list()`.
                    let list = MockMethod<Void, [User]>("list()")
                }
            }
            """
        }
    }

    @Test("A placeholder without a parameter, and a method without a verb")
    func placeholderAndVerb() {
        assertMacro {
            """
            @API
            protocol Users {
                @GET("/users/{id}")
                func user(userID: Int) async throws -> User

                func forgotten() async throws
            }
            """
        } diagnostics: {
            """
            @API
            protocol Users {
                @GET("/users/{id}")
                     ┬────────────
                     ╰─ 🛑 no parameter named 'id' fills the placeholder {id}
                func user(userID: Int) async throws -> User

                func forgotten() async throws
                     ┬────────
                     ╰─ 🛑 'forgotten' needs an HTTP method attribute: @GET, @POST, @PUT, @PATCH, @DELETE or @HEAD with a path
            }
            """
        }
    }

    @Test("An optional path parameter gets a fix-it")
    func optionalPathParameter() {
        assertMacro {
            """
            @API
            protocol Users {
                @GET("/users/{id}")
                func user(id: Int?) async throws -> User
            }
            """
        } diagnostics: {
            """
            @API
            protocol Users {
                @GET("/users/{id}")
                func user(id: Int?) async throws -> User
                              ┬───
                              ╰─ 🛑 path parameter 'id' cannot be optional: a URL path has no way to leave a segment out
                                 ✏️ make 'id' non-optional
            }
            """
        } fixes: {
            """
            @API
            protocol Users {
                @GET("/users/{id}")
                func user(id: Int) async throws -> User
            }
            """
        } expansion: {
            """
            protocol Users {
                func user(id: Int) async throws -> User
            }

            /// The client `@API` generated for `Users`.
            struct UsersClient: Users {
                /// The client every request goes through.
                let client: RestClient

                /// The request of each method, built but not sent: what a typed resource loads
                /// (`service.resource(client.endpoints.method(…))`).
                let endpoints = Endpoints()

                /// A client sending requests through `client`.
                init(client: RestClient) {
                    self.client = client
                }

                func user(id: Int) async throws -> User {
                    return try await client.result(of: self.endpoints.user(id: id).request)
                }

                /// Builds the request of each of `Users`'s methods.
                struct Endpoints: Sendable {
                    func user(id: Int) -> Endpoint<User> {
                        var request = RequestBuilder(.get, "/users/{id}")
                        request.setPathValue(id, for: "id")
                        return Endpoint(request)
                    }
                }
            }

            /// A stand-in for `Users` that `@API` generated: set each method's answer on `on`, and read
            /// the calls it received there (`mock.on.method.returns(value)`, `mock.on.method.calls`).
            final class UsersMock: Users, Sendable {
                /// Each method's answer and calls.
                let on = Methods()

                /// A mock with no answers set: a call throws `UnansweredMockCall` until its answer is.
                init() {
                }

                func user(id: Int) async throws -> User {
                    try await self.on.user.call(id)
                }

                /// The answers and calls of `UsersMock`'s methods.
                struct Methods: Sendable {
                    /// `user(id:)`.
                    let user = MockMethod<Int, User>("user(id:)")
                }
            }
            """
        }
    }

    @Test("A dictionary parameter spreads as query items or form fields, and @HeaderMap sends one as header fields")
    func maps() {
        assertMacro {
            """
            @API
            protocol Search {
                @HeaderMap("extra")
                @GET("/search")
                func search(q: String, filters: [String: String], extra: [String: String]?) async throws -> [Hit]

                @FormURLEncoded
                @POST("/forms")
                func submit(fields: [String: String]) async throws
            }
            """
        } expansion: {
            """
            protocol Search {
                func search(q: String, filters: [String: String], extra: [String: String]?) async throws -> [Hit]
                func submit(fields: [String: String]) async throws
            }

            /// The client `@API` generated for `Search`.
            struct SearchClient: Search {
                /// The client every request goes through.
                let client: RestClient

                /// The request of each method, built but not sent: what a typed resource loads
                /// (`service.resource(client.endpoints.method(…))`).
                let endpoints = Endpoints()

                /// A client sending requests through `client`.
                init(client: RestClient) {
                    self.client = client
                }

                func search(q: String, filters: [String: String], extra: [String: String]?) async throws -> [Hit] {
                    return try await client.result(of: self.endpoints.search(q: q, filters: filters, extra: extra).request)
                }

                func submit(fields: [String: String]) async throws {
                    return try await client.result(of: self.endpoints.submit(fields: fields).request)
                }

                /// Builds the request of each of `Search`'s methods.
                struct Endpoints: Sendable {
                    func search(q: String, filters: [String: String], extra: [String: String]?) -> Endpoint<[Hit]> {
                        var request = RequestBuilder(.get, "/search")
                        request.setHeaders(extra)
                        request.addQuery("q", q)
                        request.addQuery("filters", filters)
                        return Endpoint(request)
                    }

                    func submit(fields: [String: String]) -> Endpoint<Void> {
                        var request = RequestBuilder(.post, "/forms")
                        request.addFormField("fields", fields)
                        return Endpoint(request)
                    }
                }
            }

            /// A stand-in for `Search` that `@API` generated: set each method's answer on `on`, and read
            /// the calls it received there (`mock.on.method.returns(value)`, `mock.on.method.calls`).
            final class SearchMock: Search, Sendable {
                /// Each method's answer and calls.
                let on = Methods()

                /// A mock with no answers set: a call throws `UnansweredMockCall` until its answer is.
                init() {
                }

                func search(q: String, filters: [String: String], extra: [String: String]?) async throws -> [Hit] {
                    try await self.on.search.call((q: q, filters: filters, extra: extra))
                }

                func submit(fields: [String: String]) async throws {
                    try await self.on.submit.call(fields)
                }

                /// The answers and calls of `SearchMock`'s methods.
                struct Methods: Sendable {
                    /// `search(q:filters:extra:)`.
                    let search = MockMethod<(q: String, filters: [String: String], extra: [String: String]?), [Hit]>("search(q:filters:extra:)")

                    /// `submit(fields:)`.
                    let submit = MockMethod<[String: String], Void>("submit(fields:)")
                }
            }
            """
        }
    }

    @Test("A placeholder that differs from a parameter only in case or underscores gets a fix-it naming the parameter")
    func nearPlaceholder() {
        assertMacro {
            """
            @API
            protocol Users {
                @GET("/users/{user_id}/repos")
                func repos(userId: Int, sort: String?) async throws -> [Repo]
            }
            """
        } diagnostics: {
            """
            @API
            protocol Users {
                @GET("/users/{user_id}/repos")
                     ┬───────────────────────
                     ╰─ 🛑 no parameter named 'user_id' fills the placeholder {user_id}
                        ✏️ use the parameter 'userId'
                func repos(userId: Int, sort: String?) async throws -> [Repo]
            }
            """
        } fixes: {
            """
            @API
            protocol Users {
                @GET("/users/{userId}/repos")
                func repos(userId: Int, sort: String?) async throws -> [Repo]
            }
            """
        } expansion: {
            """
            protocol Users {
                func repos(userId: Int, sort: String?) async throws -> [Repo]
            }

            /// The client `@API` generated for `Users`.
            struct UsersClient: Users {
                /// The client every request goes through.
                let client: RestClient

                /// The request of each method, built but not sent: what a typed resource loads
                /// (`service.resource(client.endpoints.method(…))`).
                let endpoints = Endpoints()

                /// A client sending requests through `client`.
                init(client: RestClient) {
                    self.client = client
                }

                func repos(userId: Int, sort: String?) async throws -> [Repo] {
                    return try await client.result(of: self.endpoints.repos(userId: userId, sort: sort).request)
                }

                /// Builds the request of each of `Users`'s methods.
                struct Endpoints: Sendable {
                    func repos(userId: Int, sort: String?) -> Endpoint<[Repo]> {
                        var request = RequestBuilder(.get, "/users/{userId}/repos")
                        request.setPathValue(userId, for: "userId")
                        request.addQuery("sort", sort)
                        return Endpoint(request)
                    }
                }
            }

            /// A stand-in for `Users` that `@API` generated: set each method's answer on `on`, and read
            /// the calls it received there (`mock.on.method.returns(value)`, `mock.on.method.calls`).
            final class UsersMock: Users, Sendable {
                /// Each method's answer and calls.
                let on = Methods()

                /// A mock with no answers set: a call throws `UnansweredMockCall` until its answer is.
                init() {
                }

                func repos(userId: Int, sort: String?) async throws -> [Repo] {
                    try await self.on.repos.call((userId: userId, sort: sort))
                }

                /// The answers and calls of `UsersMock`'s methods.
                struct Methods: Sendable {
                    /// `repos(userId:sort:)`.
                    let repos = MockMethod<(userId: Int, sort: String?), [Repo]>("repos(userId:sort:)")
                }
            }
            """
        }
    }

    @Test("@HeaderMap naming no parameter is refused")
    func headerMapWithoutParameter() {
        assertMacro {
            """
            @API
            protocol Users {
                @HeaderMap("headers")
                @GET("/me")
                func me(extra: [String: String]) async throws -> User
            }
            """
        } diagnostics: {
            """
            @API
            protocol Users {
                @HeaderMap("headers")
                ┬────────────────────
                ╰─ 🛑 @HeaderMap names 'headers', but the method has no such parameter; name a [String: String] parameter
                @GET("/me")
                func me(extra: [String: String]) async throws -> User
            }
            """
        }
    }

    @Test("@Body naming nothing, @Body with a form, form with multipart, properties")
    func bodyMistakes() {
        assertMacro {
            """
            @API
            protocol Users {
                var name: String { get }

                @POST("/users")
                @Body("user")
                func create(person: User) async throws -> User

                @FormURLEncoded
                @POST("/users")
                @Body("user")
                func form(user: User) async throws

                @FormURLEncoded
                @Multipart
                @POST("/users")
                func both(name: String) async throws
            }
            """
        } diagnostics: {
            """
            @API
            protocol Users {
                var name: String { get }
                ┬───────────────────────
                ╰─ 🛑 @API protocols may only declare methods; move properties to an extension

                @POST("/users")
                @Body("user")
                ┬────────────
                ╰─ 🛑 @Body names 'user', but the method has no such parameter
                func create(person: User) async throws -> User

                @FormURLEncoded
                @POST("/users")
                @Body("user")
                ┬────────────
                ╰─ 🛑 @Body cannot be combined with @FormURLEncoded or @Multipart: the body is one or the other
                func form(user: User) async throws

                @FormURLEncoded
                @Multipart
                ┬─────────
                ╰─ 🛑 @FormURLEncoded and @Multipart cannot both apply: choose one body encoding
                @POST("/users")
                func both(name: String) async throws
            }
            """
        }
    }

    @Test("A placeholder used twice in a header or a path expands each time instead of crashing the plugin")
    func repeatedPlaceholder() {
        assertMacro {
            #"""
            @API
            protocol Items: Sendable {
                @Headers(["X-Pair": "{id}-{id}"])
                @GET("/items/{id}/{id}")
                func item(id: Int) async throws -> Item
            }
            """#
        } expansion: {
            #"""
            protocol Items: Sendable {
                func item(id: Int) async throws -> Item
            }

            /// The client `@API` generated for `Items`.
            struct ItemsClient: Items {
                /// The client every request goes through.
                let client: RestClient

                /// The request of each method, built but not sent: what a typed resource loads
                /// (`service.resource(client.endpoints.method(…))`).
                let endpoints = Endpoints()

                /// A client sending requests through `client`.
                init(client: RestClient) {
                    self.client = client
                }

                func item(id: Int) async throws -> Item {
                    return try await client.result(of: self.endpoints.item(id: id).request)
                }

                /// Builds the request of each of `Items`'s methods.
                struct Endpoints: Sendable {
                    func item(id: Int) -> Endpoint<Item> {
                        var request = RequestBuilder(.get, "/items/{id}/{id}")
                        if !id.parameterStrings.isEmpty {
                            request.setHeader("X-Pair", "\(id.parameterStrings.joined(separator: ", "))-\(id.parameterStrings.joined(separator: ", "))")
                        }
                        request.setPathValue(id, for: "id")
                        return Endpoint(request)
                    }
                }
            }

            /// A stand-in for `Items` that `@API` generated: set each method's answer on `on`, and read
            /// the calls it received there (`mock.on.method.returns(value)`, `mock.on.method.calls`).
            final class ItemsMock: Items, Sendable {
                /// Each method's answer and calls.
                let on = Methods()

                /// A mock with no answers set: a call throws `UnansweredMockCall` until its answer is.
                init() {
                }

                func item(id: Int) async throws -> Item {
                    try await self.on.item.call(id)
                }

                /// The answers and calls of `ItemsMock`'s methods.
                struct Methods: Sendable {
                    /// `item(id:)`.
                    let item = MockMethod<Int, Item>("item(id:)")
                }
            }
            """#
        }
    }

    @Test("Query placeholders fill their item; parameters named request or client do not clash with the expansion")
    func queryPlaceholdersAndReservedNames() {
        assertMacro {
            #"""
            @API
            protocol Search: Sendable {
                @GET("/search?q={query}")
                func search(query: String, page: Int) async throws -> [Hit]

                @POST("/things/{client}")
                @Body("request")
                func create(client: String, request: NewThing) async throws -> Thing
            }
            """#
        } expansion: {
            """
            protocol Search: Sendable {
                func search(query: String, page: Int) async throws -> [Hit]
                func create(client: String, request: NewThing) async throws -> Thing
            }

            /// The client `@API` generated for `Search`.
            struct SearchClient: Search {
                /// The client every request goes through.
                let client: RestClient

                /// The request of each method, built but not sent: what a typed resource loads
                /// (`service.resource(client.endpoints.method(…))`).
                let endpoints = Endpoints()

                /// A client sending requests through `client`.
                init(client: RestClient) {
                    self.client = client
                }

                func search(query: String, page: Int) async throws -> [Hit] {
                    return try await client.result(of: self.endpoints.search(query: query, page: page).request)
                }

                func create(client: String, request: NewThing) async throws -> Thing {
                    return try await self.client.result(of: self.endpoints.create(client: client, request: request).request)
                }

                /// Builds the request of each of `Search`'s methods.
                struct Endpoints: Sendable {
                    func search(query: String, page: Int) -> Endpoint<[Hit]> {
                        var request = RequestBuilder(.get, "/search?q={query}")
                        request.setQueryValue(query, for: "query")
                        request.addQuery("page", page)
                        return Endpoint(request)
                    }

                    func create(client: String, request: NewThing) -> Endpoint<Thing> {
                        var __macro_local_7requestfMu_ = RequestBuilder(.post, "/things/{client}")
                        __macro_local_7requestfMu_.setPathValue(client, for: "client")
                        __macro_local_7requestfMu_.setBody(request)
                        return Endpoint(__macro_local_7requestfMu_)
                    }
                }
            }

            /// A stand-in for `Search` that `@API` generated: set each method's answer on `on`, and read
            /// the calls it received there (`mock.on.method.returns(value)`, `mock.on.method.calls`).
            final class SearchMock: Search, Sendable {
                /// Each method's answer and calls.
                let on = Methods()

                /// A mock with no answers set: a call throws `UnansweredMockCall` until its answer is.
                init() {
                }

                func search(query: String, page: Int) async throws -> [Hit] {
                    try await self.on.search.call((query: query, page: page))
                }

                func create(client: String, request: NewThing) async throws -> Thing {
                    try await self.on.create.call((client: client, request: request))
                }

                /// The answers and calls of `SearchMock`'s methods.
                struct Methods: Sendable {
                    /// `search(query:page:)`.
                    let search = MockMethod<(query: String, page: Int), [Hit]>("search(query:page:)")

                    /// `create(client:request:)`.
                    let create = MockMethod<(client: String, request: NewThing), Thing>("create(client:request:)")
                }
            }
            """
        }
    }

    @Test("@Invalidates names what a write changes, placeholders filled like the path's, and each method has an unsent endpoint")
    func invalidates() {
        assertMacro {
            #"""
            @API
            protocol Garage {
                @POST("/people/{id}/cars")
                @Body("car")
                @Invalidates("/people/{id}", "/cars", "/teams/{team}")
                func addCar(id: Int, team: String, car: NewCar) async throws -> Car
            }
            """#
        } expansion: {
            """
            protocol Garage {
                func addCar(id: Int, team: String, car: NewCar) async throws -> Car
            }

            /// The client `@API` generated for `Garage`.
            struct GarageClient: Garage {
                /// The client every request goes through.
                let client: RestClient

                /// The request of each method, built but not sent: what a typed resource loads
                /// (`service.resource(client.endpoints.method(…))`).
                let endpoints = Endpoints()

                /// A client sending requests through `client`.
                init(client: RestClient) {
                    self.client = client
                }

                func addCar(id: Int, team: String, car: NewCar) async throws -> Car {
                    return try await client.result(of: self.endpoints.addCar(id: id, team: team, car: car).request)
                }

                /// Builds the request of each of `Garage`'s methods.
                struct Endpoints: Sendable {
                    func addCar(id: Int, team: String, car: NewCar) -> Endpoint<Car> {
                        var request = RequestBuilder(.post, "/people/{id}/cars")
                        request.setPathValue(id, for: "id")
                        request.setPathValue(team, for: "team")
                        request.invalidates = ["/people/{id}", "/cars", "/teams/{team}"]
                        request.setBody(car)
                        request.addQuery("team", team)
                        return Endpoint(request)
                    }
                }
            }

            /// A stand-in for `Garage` that `@API` generated: set each method's answer on `on`, and read
            /// the calls it received there (`mock.on.method.returns(value)`, `mock.on.method.calls`).
            final class GarageMock: Garage, Sendable {
                /// Each method's answer and calls.
                let on = Methods()

                /// A mock with no answers set: a call throws `UnansweredMockCall` until its answer is.
                init() {
                }

                func addCar(id: Int, team: String, car: NewCar) async throws -> Car {
                    try await self.on.addCar.call((id: id, team: team, car: car))
                }

                /// The answers and calls of `GarageMock`'s methods.
                struct Methods: Sendable {
                    /// `addCar(id:team:car:)`.
                    let addCar = MockMethod<(id: Int, team: String, car: NewCar), Car>("addCar(id:team:car:)")
                }
            }
            """
        }
    }

    @Test("@Invalidates with something other than a path literal is refused")
    func invalidatesMistakes() {
        assertMacro {
            #"""
            @API
            protocol Garage {
                @DELETE("/cars/{id}")
                @Invalidates("cars", "/owners/{owner}")
                func removeCar(id: Int) async throws
            }
            """#
        } diagnostics: {
            """
            @API
            protocol Garage {
                @DELETE("/cars/{id}")
                @Invalidates("cars", "/owners/{owner}")
                             ┬──────
                             ╰─ 🛑 @Invalidates takes path templates as string literals starting with '/', such as "/people/{id}"
                func removeCar(id: Int) async throws
                     ┬────────
                     ╰─ 🛑 no parameter named 'owner' fills the placeholder {owner}
            }
            """
        }
    }

    @Test("The generated mock names overloads by their labels, records none, one or many arguments, and refuses generic methods")
    func mockShapes() {
        assertMacro {
            #"""
            @API
            protocol Search: Sendable {
                @GET("/search")
                func find(q: String) async throws -> [Hit]

                @GET("/search")
                func find(tag: String, limit: Int) async throws -> [Hit]

                @GET("/ping")
                func ping() async throws

                @GET("/any")
                func any<T: Decodable & Sendable>(kind: String) async throws -> T
            }
            """#
        } expansion: {
            """
            protocol Search: Sendable {
                func find(q: String) async throws -> [Hit]
                func find(tag: String, limit: Int) async throws -> [Hit]
                func ping() async throws
                func any<T: Decodable & Sendable>(kind: String) async throws -> T
            }

            /// The client `@API` generated for `Search`.
            struct SearchClient: Search {
                /// The client every request goes through.
                let client: RestClient

                /// The request of each method, built but not sent: what a typed resource loads
                /// (`service.resource(client.endpoints.method(…))`).
                let endpoints = Endpoints()

                /// A client sending requests through `client`.
                init(client: RestClient) {
                    self.client = client
                }

                func find(q: String) async throws -> [Hit] {
                    return try await client.result(of: self.endpoints.find(q: q).request)
                }

                func find(tag: String, limit: Int) async throws -> [Hit] {
                    return try await client.result(of: self.endpoints.find(tag: tag, limit: limit).request)
                }

                func ping() async throws {
                    return try await client.result(of: self.endpoints.ping().request)
                }

                func any<T: Decodable & Sendable>(kind: String) async throws -> T {
                    return try await client.result(of: self.endpoints.any(kind: kind).request)
                }

                /// Builds the request of each of `Search`'s methods.
                struct Endpoints: Sendable {
                    func find(q: String) -> Endpoint<[Hit]> {
                        var request = RequestBuilder(.get, "/search")
                        request.addQuery("q", q)
                        return Endpoint(request)
                    }

                    func find(tag: String, limit: Int) -> Endpoint<[Hit]> {
                        var request = RequestBuilder(.get, "/search")
                        request.addQuery("tag", tag)
                        request.addQuery("limit", limit)
                        return Endpoint(request)
                    }

                    func ping() -> Endpoint<Void> {
                        let request = RequestBuilder(.get, "/ping")
                        return Endpoint(request)
                    }

                    func any<T: Decodable & Sendable>(kind: String) -> Endpoint<T> {
                        var request = RequestBuilder(.get, "/any")
                        request.addQuery("kind", kind)
                        return Endpoint(request)
                    }
                }
            }

            /// A stand-in for `Search` that `@API` generated: set each method's answer on `on`, and read
            /// the calls it received there (`mock.on.method.returns(value)`, `mock.on.method.calls`).
            final class SearchMock: Search, Sendable {
                /// Each method's answer and calls.
                let on = Methods()

                /// A mock with no answers set: a call throws `UnansweredMockCall` until its answer is.
                init() {
                }

                func find(q: String) async throws -> [Hit] {
                    try await self.on.find_q.call(q)
                }

                func find(tag: String, limit: Int) async throws -> [Hit] {
                    try await self.on.find_tag_limit.call((tag: tag, limit: limit))
                }

                func ping() async throws {
                    try await self.on.ping.call(())
                }

                func any<T: Decodable & Sendable>(kind: String) async throws -> T {
                    throw UnansweredMockCall(method: "any(kind:) (a generic method, which a mock cannot answer)")
                }

                /// The answers and calls of `SearchMock`'s methods.
                struct Methods: Sendable {
                    /// `find(q:)`.
                    let find_q = MockMethod<String, [Hit]>("find(q:)")

                    /// `find(tag:limit:)`.
                    let find_tag_limit = MockMethod<(tag: String, limit: Int), [Hit]>("find(tag:limit:)")

                    /// `ping()`.
                    let ping = MockMethod<Void, Void>("ping()")
                }
            }
            """
        }
    }
}

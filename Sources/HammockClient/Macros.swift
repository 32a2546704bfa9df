/// Generates `<Protocol>Client`, a struct implementing the protocol by sending requests through a
/// ``RestClient``, and its `endpoints`: each method's request as an ``Endpoint``, built but not sent, for
/// typed resources; and `<Protocol>Mock`, a stand-in whose methods answer from closures and record their
/// calls (``MockMethod``), for tests of code that takes the protocol.
///
/// ```swift
/// @API
/// protocol GitHub: Sendable {
///     @GET("/users/{user}/repos")
///     func listRepos(user: String, sort: String?) async throws -> [Repo]
/// }
/// let github = GitHubClient(client: RestClient(baseURL: URL(string: "https://api.github.com")!))
/// ```
/// Every method needs a verb attribute and must be `async throws`. Parameters fill `{placeholders}` in
/// the path and in `@Headers` values; `@Body("name")` sends one as the body; the rest become query
/// items (the external label is the wire name), form fields with `@FormURLEncoded`, or parts with
/// `@Multipart`. Results: any `Decodable`, an optional (`nil` for 204 or an empty body), `Void`,
/// `Data`, `Response<T>`, or a ``DownloadedFile``.
@attached(peer, names: suffixed(Client), suffixed(Mock))
public macro API() = #externalMacro(module: "HammockClientMacros", type: "APIMacro")

/// `GET` at a path template relative to the base URL (`"/users/{user}?type=all"`).
@attached(peer)
public macro GET(_ path: String) = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// `POST` at a path template.
@attached(peer)
public macro POST(_ path: String) = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// `PUT` at a path template.
@attached(peer)
public macro PUT(_ path: String) = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// `PATCH` at a path template.
@attached(peer)
public macro PATCH(_ path: String) = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// `DELETE` at a path template.
@attached(peer)
public macro DELETE(_ path: String) = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// `HEAD` at a path template.
@attached(peer)
public macro HEAD(_ path: String) = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// What a successful call changes besides its own URL: path templates relative to the base URL, with
/// `{placeholders}` filled from the method's parameters. A `Service` (HammockResources) the client reports writes to
/// (`RestClient(…, writeObservers: [service])`) invalidates those resources (every query of each path),
/// and observed ones reload.
///
/// ```swift
/// @POST("/people/{id}/cars")
/// @Body("car")
/// @Invalidates("/people/{id}", "/cars")
/// func addCar(id: Int, car: NewCar) async throws -> Car
/// ```
@attached(peer)
public macro Invalidates(_ paths: String...) = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// Sends the named parameter as the JSON body.
@attached(peer)
public macro Body(_ parameter: String) = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// Sends a dictionary parameter's pairs as header fields (`[String: String]`, optional or not; a `nil`
/// value leaves that header out): `@HeaderMap("extra") func get(id: Int, extra: [String: String])`.
@attached(peer)
public macro HeaderMap(_ parameter: String) = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// Headers for one method, or for every method when on the protocol; values may contain `{parameter}`.
@attached(peer)
public macro Headers(_ headers: [String: String]) = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// Sends the remaining parameters as an `application/x-www-form-urlencoded` body.
@attached(peer)
public macro FormURLEncoded() = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// Sends the remaining parameters as `multipart/form-data` parts (``FilePart`` parameters as files).
@attached(peer)
public macro Multipart() = #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

/// Decodes non-2xx bodies of every method into `type`, available as ``RestError/errorBody``.
@attached(peer)
public macro ErrorBody<T: Decodable & Sendable>(_ type: T.Type) =
    #externalMacro(module: "HammockClientMacros", type: "MarkerMacro")

import HammockJSON
import HammockServer

extension OpenAPIMapper {
    /// The user a login made from a document signs in as (password grant).
    static let demoUser = (username: "demo", password: "demo")
    /// The client a login made from a document's `clientCredentials` flow gets tokens for.
    static let demoClient = (id: "demo-client", secret: "demo-secret")

    /// A login (the configuration's `auth` section) for a document whose operations need OAuth 2.0 or
    /// OpenID Connect tokens: its token endpoint at the path of the flows' `tokenUrl` (inside the base
    /// path), a demo user for the password grant and a demo client for client credentials. The document's
    /// requirements then take only the mock's own valid tokens. `nil` when no operation needs such a token.
    ///
    /// Flows a mock cannot play without a browser (`authorizationCode`, `implicit`) get the password grant
    /// at their token URL instead, and a note says so.
    mutating func login(_ root: JSONObject) -> JSON? {
        let defined = root["components"]?["securitySchemes"]?.objectValue ?? JSONObject()
        var tokenURL: (scheme: String, url: String)?
        var users = false
        var clients = false
        for name in usedSecuritySchemes.sorted() {
            guard case .object(let scheme)? = schemas.resolve(defined[name]) else { continue }
            let place = "components.securitySchemes.\(name)"
            switch scheme["type"]?.stringValue {
            case "oauth2":
                let flows = scheme["flows"]?.objectValue ?? JSONObject()
                for flow in ["password", "clientCredentials", "authorizationCode"] where tokenURL == nil {
                    if case .string(let url)? = flows[flow]?["tokenUrl"] { tokenURL = (name, url) }
                }
                if flows["password"] != nil { users = true }
                if flows["clientCredentials"] != nil { clients = true }
                let browserFlows = ["authorizationCode", "implicit"].filter { flows[$0] != nil }
                if !browserFlows.isEmpty {
                    users = true
                    notes.append(
                        .init(
                            place: place,
                            message: "\(browserFlows.joined(separator: " and ")): no browser sign-in is served; "
                                + "the mock's token endpoint takes the password grant for user '\(Self.demoUser.username)'"))
                }
            case "openIdConnect":
                users = true
                notes.append(
                    .init(
                        place: place,
                        message: "openIdConnectUrl is not fetched; the mock serves its own discovery document at "
                            + "/.well-known/openid-configuration and a password login for user '\(Self.demoUser.username)'"))
            default:
                continue
            }
        }
        guard users || clients else { return nil }
        var auth = JSONObject()
        var tokenPath = "/auth/token"
        if let tokenURL {
            if let path = Self.tokenPath(of: tokenURL.url, under: basePath) {
                tokenPath = path
            } else {
                notes.append(
                    .init(
                        place: "components.securitySchemes.\(tokenURL.scheme)",
                        message:
                            "the tokenUrl '\(tokenURL.url.prefix(200))' has no path a route can have; tokens are served at \(tokenPath)"
                    ))
            }
            auth["tokenPath"] = .string(tokenPath)
        }
        var who: [String] = []
        if users {
            auth["users"] = [["username": .string(Self.demoUser.username), "password": .string(Self.demoUser.password)]]
            who.append("user '\(Self.demoUser.username)' (password '\(Self.demoUser.password)')")
        }
        if clients {
            auth["clients"] = [["id": .string(Self.demoClient.id), "secret": .string(Self.demoClient.secret)]]
            who.append("client '\(Self.demoClient.id)' (secret '\(Self.demoClient.secret)')")
        }
        notes.append(
            .init(
                place: "components.securitySchemes",
                message: "a login is served: tokens at POST \(basePath ?? "")\(tokenPath) for \(who.joined(separator: " and ")); "
                    + "the operations that need a token take only the mock's own (hammock serve --auth FILE gives another login)")
        )
        return .object(auth)
    }

    /// The route path of a `tokenUrl`: its path without the scheme and host, inside `basePath` when it is
    /// under it (`https://api.example.com/v1/oauth/token` under `/v1` is `/oauth/token`); `nil` for one no
    /// login may have (a query, a colon, empty).
    static func tokenPath(of url: String, under basePath: String?) -> String? {
        var path = Substring(url)
        if let scheme = path.firstRange(of: "://") {
            path = path[scheme.upperBound...]
            path = path[(path.firstIndex(of: "/") ?? path.endIndex)...]
        }
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        var result = path.hasPrefix("/") ? String(path) : "/" + path
        if let basePath, result.hasPrefix(basePath + "/") { result = String(result.dropFirst(basePath.count)) }
        guard result.count > 1, result.count <= 200, !result.contains(":"), !result.contains("//") else { return nil }
        return result
    }
}

import HammockJSON

extension AdminRoutes {
    /// The login's rows: its state, and the switches a test turns on over HTTP.
    static let authRows: [Row] = [
        // `GET <prefix>/auth`: the settings in short, the keys, the live refresh tokens, the switches.
        Row(pattern: ["auth"], methods: [.get]) { call in
            let authority = try call.server.requireAuthority()
            let (switches, refreshTokens) = authority.snapshot
            return MockResponse(json: [
                "tokenPath": .string(authority.settings.tokenPath), "algorithm": .string(authority.settings.algorithm.name),
                "users": .integer(authority.settings.users.count), "clients": .integer(authority.settings.clients.count),
                "rules": .integer(authority.settings.rules.count), "keys": .array(authority.keys.keyIDs.map(JSON.string)),
                "refreshTokens": .integer(refreshTokens),
                "switches": [
                    "rejectNextRefreshes": .integer(switches.refusedRefreshes),
                    "answerUnauthorized": .integer(switches.forcedUnauthorized),
                ],
            ])
        },
        // `POST <prefix>/auth/expire`: every access token issued so far expires.
        Row(pattern: ["auth", "expire"], methods: [.post]) { call in
            try call.server.expireAccessTokens()
            return MockResponse(status: .noContent)
        },
        // `POST <prefix>/auth/reject-refresh` with `{"count": 1}` (1 when absent).
        Row(pattern: ["auth", "reject-refresh"], methods: [.post]) { call in
            try call.server.rejectNextRefreshes(try count(in: call.request))
            return MockResponse(status: .noContent)
        },
        // `POST <prefix>/auth/unauthorized` with `{"count": 3}`.
        Row(pattern: ["auth", "unauthorized"], methods: [.post]) { call in
            try call.server.answerUnauthorized(next: try count(in: call.request))
            return MockResponse(status: .noContent)
        },
        // `POST <prefix>/auth/rotate` with `{"keepPrevious": false}` (true when absent): the keys after.
        Row(pattern: ["auth", "rotate"], methods: [.post]) { call in
            var keep = true
            if !call.request.body.isEmpty {
                guard case .object(let object) = try jsonBody(of: call.request) else {
                    throw HTTPProblem.badRequest("Expected {\"keepPrevious\": true}")
                }
                if let value = object["keepPrevious"] {
                    guard case .bool(let flag) = value else {
                        throw HTTPProblem.badRequest("keepPrevious: expected true or false")
                    }
                    keep = flag
                }
            }
            try await call.server.rotateSigningKey(keepingPrevious: keep)
            let keys = try call.server.requireAuthority().keys.keyIDs
            return MockResponse(json: ["keys": .array(keys.map(JSON.string))])
        },
        // `POST <prefix>/auth/revoke` with `{"username": "ada"}`: how many refresh tokens went.
        Row(pattern: ["auth", "revoke"], methods: [.post]) { call in
            let name = try username(in: call.request)
            return MockResponse(json: ["refreshTokens": .integer(try call.server.revokeSessions(of: name))])
        },
        // `POST <prefix>/auth/tokens` with `{"username": "ada"}`: an access token, as after a good password.
        Row(pattern: ["auth", "tokens"], methods: [.post]) { call in
            let name = try username(in: call.request)
            _ = try call.server.requireAuthority()
            return MockResponse(json: [
                "access_token": .string(try await call.server.accessToken(for: name)), "token_type": "Bearer",
            ])
        },
    ]

    /// `{"count": N}` (a whole number from 0), 1 for an empty body.
    static func count(in request: MockRequest) throws -> Int {
        guard !request.body.isEmpty else { return 1 }
        guard case .object(let object) = try jsonBody(of: request), case .integer(let count)? = object["count"], count >= 0 else {
            throw HTTPProblem.badRequest("Expected {\"count\": N} with N a whole number from 0")
        }
        return count
    }

    /// `{"username": "ada"}`.
    static func username(in request: MockRequest) throws -> String {
        guard case .object(let object) = try jsonBody(of: request), case .string(let name)? = object["username"] else {
            throw HTTPProblem.badRequest("Expected {\"username\": \"ada\"}")
        }
        return name
    }
}

extension AuthSettingsError: HTTPProblemConvertible {
    /// The error as an answer: 404 when the server has no login or no such user, 400 otherwise.
    public var problem: HTTPProblem {
        isMissing ? HTTPProblem.notFound(message) : HTTPProblem.badRequest(description)
    }
}

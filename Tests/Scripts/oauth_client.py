"""A client no one here wrote meets the mock's login: PyJWT verifies its access tokens against the JWKS it
serves, and a conformance script checks its token endpoint against RFC 6749's examples (§4.3.2, §4.4.2,
§5.1, §5.2, §6, §2.3.1, §3.2). Prints one JSON report per check; exits 1 if a check could not run.

Usage: oauth_client.py BASE_URL ALGORITHM
"""

import base64
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

import jwt

BASE = sys.argv[1].rstrip("/")
ALGORITHM = sys.argv[2]
# RFC 6749 §4.3.2's example client and user.
CLIENT = ("s6BhdRkqt3", "gX1fBat3bV")
USER = ("johndoe", "A3ddj3w")


def basic(client_id, secret):
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


def call(method, path, body=None, headers=None):
    """(status, headers as a lowercase dict, body bytes) of one request."""
    request = urllib.request.Request(BASE + path, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def token_request(parameters, authorization=None, raw=None):
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if authorization:
        headers["Authorization"] = authorization
    body = raw.encode() if raw is not None else urllib.parse.urlencode(parameters).encode()
    status, fields, data = call("POST", "/auth/token", body, headers)
    try:
        parsed = json.loads(data)
    except ValueError:
        parsed = None
    return status, fields, parsed


def report(check, **values):
    print(json.dumps({"check": check, **values}), flush=True)


def pyjwt_check():
    status, _, body = token_request({"grant_type": "password", "username": USER[0], "password": USER[1]},
                                    authorization=basic(*CLIENT))
    token = body["access_token"]
    keys = jwt.PyJWKClient(BASE + "/.well-known/jwks.json")
    key = keys.get_signing_key_from_jwt(token)
    claims = jwt.decode(token, key.key, algorithms=[ALGORITHM], audience="people-api", issuer="hammock",
                        options={"require": ["exp", "iat", "sub"]})
    # The discovery document leads to the same keys.
    _, _, discovery = call("GET", "/.well-known/openid-configuration")
    document = json.loads(discovery)
    unauthorized, challenge, _ = call("GET", "/people")
    authorized, _, _ = call("GET", "/people", headers={"Authorization": "Bearer " + token})
    # PyJWT's own forgeries: unsigned, and signed with a secret of its choosing.
    unsigned = jwt.encode(dict(claims, roles=["admin"]), None, algorithm="none",
                          headers={"kid": jwt.get_unverified_header(token)["kid"]})
    forged = jwt.encode(dict(claims, roles=["admin"]), "a secret the server never gave" * 2, algorithm="HS256",
                        headers={"kid": jwt.get_unverified_header(token)["kid"]})
    refused = [call("GET", "/people", headers={"Authorization": "Bearer " + t})[0] for t in (unsigned, forged)]
    huge, _, _ = call("GET", "/people", headers={"Authorization": "Bearer " + "a" * 10_000})
    report("pyjwt", status=status, subject=claims["sub"], roles=claims.get("roles"), kid=key.key_id,
           jwks_uri=document["jwks_uri"].endswith("/.well-known/jwks.json"),
           token_endpoint=document["token_endpoint"].endswith("/auth/token"),
           unauthorized=unauthorized, challenge=challenge.get("www-authenticate"), authorized=authorized,
           forgeries=refused, huge=huge)


def conformance():
    failures = []
    passed = 0

    def expect(condition, what):
        nonlocal passed
        if condition:
            passed += 1
        else:
            failures.append(what)

    # §4.3.2 and §5.1: the example's request, its answer's members and headers.
    status, fields, body = token_request({"grant_type": "password", "username": USER[0], "password": USER[1]},
                                         authorization=basic(*CLIENT))
    expect(status == 200, "4.3.2 password grant: 200")
    expect(fields.get("content-type", "").startswith("application/json"), "5.1 Content-Type application/json")
    expect(fields.get("cache-control") == "no-store", "5.1 Cache-Control: no-store")
    expect(fields.get("pragma") == "no-cache", "5.1 Pragma: no-cache")
    expect(isinstance(body.get("access_token"), str), "5.1 access_token")
    expect(str(body.get("token_type", "")).lower() == "bearer", "5.1 token_type bearer (case-insensitive)")
    expect(isinstance(body.get("expires_in"), int) and body["expires_in"] > 0, "5.1 expires_in in seconds")
    expect(isinstance(body.get("refresh_token"), str), "5.1 refresh_token")
    refresh = body.get("refresh_token", "")

    # §6: a refresh gives a new access token; a new refresh token replaces the old (rotation), which then fails.
    status, _, renewed = token_request({"grant_type": "refresh_token", "refresh_token": refresh},
                                       authorization=basic(*CLIENT))
    expect(status == 200 and renewed.get("access_token") not in (None, body.get("access_token")), "6 refresh: new token")
    status, _, again = token_request({"grant_type": "refresh_token", "refresh_token": refresh},
                                     authorization=basic(*CLIENT))
    expect(status == 400 and again.get("error") == "invalid_grant", "6 a rotated refresh token is invalid_grant")

    # §4.4.2 and §4.4.3: client credentials, no refresh token.
    status, _, own = token_request({"grant_type": "client_credentials"}, authorization=basic(*CLIENT))
    expect(status == 200 and "access_token" in own, "4.4.2 client credentials: 200")
    expect("refresh_token" not in own, "4.4.3 no refresh token for client credentials")
    # §2.3.1: the client's credentials in the body instead.
    status, _, _ = token_request({"grant_type": "client_credentials", "client_id": CLIENT[0], "client_secret": CLIENT[1]})
    expect(status == 200, "2.3.1 client_id and client_secret in the body")
    # §2.3.1: not both ways at once.
    status, _, both = token_request({"grant_type": "client_credentials", "client_secret": CLIENT[1]},
                                    authorization=basic(*CLIENT))
    expect(status == 400 and both.get("error") == "invalid_request", "2.3.1 one authentication method only")

    # §5.2: each error code where the RFC puts it.
    errors = [
        ({"grant_type": "password", "username": USER[0], "password": "wrong"}, basic(*CLIENT), None, 400, "invalid_grant"),
        ({"username": USER[0], "password": USER[1]}, basic(*CLIENT), None, 400, "invalid_request"),
        ({"grant_type": "urn:example:unknown"}, basic(*CLIENT), None, 400, "unsupported_grant_type"),
        ({"grant_type": "client_credentials"}, basic(CLIENT[0], "wrong"), None, 401, "invalid_client"),
        ({"grant_type": "client_credentials"}, basic("nobody", "x"), None, 401, "invalid_client"),
        (None, basic(*CLIENT), "grant_type=password&grant_type=password&username=johndoe&password=A3ddj3w", 400,
         "invalid_request"),
    ]
    for parameters, authorization, raw, expected_status, code in errors:
        status, fields, body = token_request(parameters, authorization=authorization, raw=raw)
        what = f"5.2 {code} for {raw or parameters}"
        expect(status == expected_status, what + f": status {expected_status}, got {status}")
        expect(isinstance(body, dict) and body.get("error") == code, what + f": error, got {body}")
        expect(isinstance(body, dict) and isinstance(body.get("error_description", ""), str), what + ": description")
        if expected_status == 401:
            expect("www-authenticate" in fields, what + ": WWW-Authenticate with Basic")
    # §3.2: the token endpoint takes POST only.
    status, _, _ = call("GET", "/auth/token?grant_type=password&username=johndoe&password=A3ddj3w")
    expect(status == 405, "3.2 GET on the token endpoint is refused")
    report("rfc6749", passed=passed, failures=failures)


pyjwt_check()
conformance()

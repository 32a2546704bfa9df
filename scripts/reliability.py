#!/usr/bin/env python3
"""The reliability suite: hostile input, concurrency, crashes and endurance against `hammock serve`.

Run it through `scripts/reliability`, which builds the release binary first. Every check runs over
loopback against a real server process, on the stores it names, and prints one row of a table; the
exit status is 1 if any check failed. Standard library only, but for `--http2`
(reliability_http2.py), which needs the h2 package that `scripts/setup --tests` installs into .venv.
"""

import argparse
import concurrent.futures
import http.client
import json
import os
import random
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

from reliability_backend import close_frame_code

CONFIG = {
    "resources": [
        {"name": "people", "fields": {"name": "string", "age": "integer", "height": "float", "active": "boolean",
                                      "avatar": "blob", "born": "date", "extra": "json"}},
        {"name": "categories", "fields": {"slug": "string", "title": "string"}, "primaryKey": "slug"},
        {"name": "cars", "fields": {"name": "string"}, "parents": ["people"]},
    ],
    "routes": [{"path": "/ws/echo", "websocket": {"echo": True}}],
}


# Over TLS (`--tls`): every server is started with `--https` (its certificate authority in a folder of the
# run's own), and every connection of every check is wrapped in TLS trusting that authority. None otherwise.
TLS = None
HTTPS = False
CA_DIRECTORY = None


def open_connection(port, timeout=None):
    """A connection to the server, in TLS when the run is over TLS (the handshake done here)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return TLS.wrap_socket(sock, server_hostname="127.0.0.1") if TLS else sock


def http_connection(port, timeout):
    if TLS:
        return http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=TLS)
    return http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)


class Server:
    """A `hammock serve` process on a free port."""

    def __init__(self, binary, directory, store, extra=(), limit_descriptors=None, config=None):
        self.config = config or os.path.join(directory, "reliability.json")
        if config is None:
            with open(self.config, "w") as file:
                json.dump(CONFIG, file)
        arguments = [binary, "serve", self.config, "--store", store, "--port", "0", "--quiet",
                     "--request-timeout", "2", "--idle-timeout", "5", *(["--https"] if HTTPS else []), *extra]

        def limit():
            if limit_descriptors:
                resource.setrlimit(resource.RLIMIT_NOFILE, (limit_descriptors, limit_descriptors))

        environment = dict(os.environ, **({"HAMMOCK_CA_DIR": CA_DIRECTORY} if CA_DIRECTORY else {}))
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        preexec_fn=limit, env=environment)
        self.port = None
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            if line.startswith("Hammock is serving"):
                self.port = int(line.strip().rsplit(":", 1)[1])
                break
        if self.port is None:
            raise RuntimeError("the server did not start: " + self.process.stderr.read())
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for _ in self.process.stdout:
            pass

    def alive(self):
        return self.process.poll() is None

    def descriptors(self):
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def rss_kib(self):
        with open(f"/proc/{self.process.pid}/status") as file:
            for line in file:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def cpu_seconds(self):
        with open(f"/proc/{self.process.pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, kill=False):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def request(port, method, path, body=None, headers=None, timeout=10):
    connection = http_connection(port, timeout)
    try:
        payload = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        all_headers = {"Content-Type": "application/json"} if payload is not None else {}
        all_headers.update(headers or {})
        connection.request(method, path, body=payload, headers=all_headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, dict(response.getheaders()), data
    finally:
        connection.close()


def snapshot(port):
    return [request(port, "GET", path)[2] for path in ("/people", "/categories", "/cars")]


def raw_exchange(port, data, half_close=False, timeout=10, responses=None):
    """Sends raw bytes and reads until the server closes, stays silent for `timeout`, or has sent
    `responses` complete responses (if given: a kept-alive connection would otherwise hold the check
    until the idle timeout)."""
    sock = open_connection(port, timeout=timeout)
    received = b""
    try:
        try:
            sock.sendall(data)
            if half_close and TLS:
                # TLS ends the client's input with close_notify. Python's SSLSocket.shutdown would drop the
                # TLS layer and leave raw records to read; unwrap sends close_notify and waits for the
                # server's, and fails if application data (an answer) comes first.
                try:
                    sock.unwrap()
                    return received, True
                except ssl.SSLEOFError:
                    return received, True  # closed without its close_notify: closed all the same
                except socket.timeout:
                    return received, False
                except ssl.SSLError as error:
                    return f"(TLS: {error.reason} after the client's close_notify)".encode(), False
            elif half_close:
                sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass
        while True:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                return received, False
            except ConnectionResetError:
                return received, True
            if not chunk:
                return received, True
            received += chunk
            if responses is not None and len(parse_responses(received)) >= responses:
                return received, False
    finally:
        sock.close()


def parse_responses(data):
    responses = []
    while b"\r\n\r\n" in data:
        head, rest = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = 0 if status in (100, 204, 304) else int(headers.get("content-length", "0"))
        if len(rest) < length:
            break  # the body is still arriving
        responses.append((status, headers, rest[:length]))
        data = rest[length:]
    return responses


def http_request(method, path, body=b"", headers=()):
    lines = [f"{method} {path} HTTP/1.1", "Host: reliability"]
    lines += list(headers)
    if body and not any(h.lower().startswith(("content-length", "transfer-encoding")) for h in headers):
        lines.append(f"Content-Length: {len(body)}")
    if body and not any(h.lower().startswith("content-type") for h in headers):
        lines.append("Content-Type: application/json")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


INT_MAX = 9223372036854775807
INT_MIN = -9223372036854775808


def bad_input_corpus():
    """(name, bytes, expectation): 'problem' a 4xx problem+json; 'closed' no response, the connection closes;
    'answered' a 200 JSON answer or a 4xx problem; a list of statuses: those responses, in order."""
    deep = b"[" * 100_000
    sql = "'; DROP TABLE people; --"
    corpus = [
        ("malformed JSON", http_request("POST", "/people", b'{"name": "x",}'), "problem"),
        ("truncated JSON", http_request("POST", "/people", b'{"name": "x"'), "problem"),
        ("body shorter than Content-Length", http_request("POST", "/people", b'{"name":', ("Content-Length: 50",)), "problem"),
        ("deep nesting", http_request("POST", "/people", deep), "problem"),
        ("huge number", http_request("POST", "/people", b'{"age": 1' + b"0" * 5000 + b"}"), "problem"),
        ("integer below Int64.min", http_request("POST", "/people", b'{"age": -9223372036854775809}'), "problem"),
        ("number beyond double", http_request("POST", "/people", b'{"height": 1e400}'), "problem"),
        ("invalid UTF-8", http_request("POST", "/people", b'{"name": "\xc3\x28"}'), "problem"),
        ("raw NUL in a string", http_request("POST", "/people", b'{"name": "a\x00b"}'), "problem"),
        ("a body that is not an object", http_request("POST", "/people", b"[1, 2]"), "problem"),
        ("wrong types", http_request("POST", "/people", b'{"age": "old", "active": 3, "born": "yesterday"}'), "problem"),
        ("empty string key", http_request("POST", "/categories", b'{"slug": ""}'), "problem"),
        ("bad form encoding", http_request("POST", "/people", b"name=%zz", ("Content-Type: application/x-www-form-urlencoded",)), "problem"),
        ("unsupported media type", http_request("POST", "/people", b"<x/>", ("Content-Type: application/xml",)), "problem"),
        ("SQL in a path key", http_request("GET", "/categories/" + "%27%3B%20DROP%20TABLE%20people%3B%20--"), "problem"),
        ("SQL in an integer id", http_request("DELETE", "/people/1%20OR%201=1"), "problem"),
        ("SQL in a field name", http_request("PATCH", "/people/1", json.dumps({sql: 1}).encode()), "problem"),
        ("path traversal", http_request("GET", "/../people/../../etc/passwd"), "problem"),
        ("encoded path traversal", http_request("GET", "/people/..%2F..%2Fetc%2Fpasswd"), "problem"),
        ("dot segments", http_request("DELETE", "/people/./1/.."), "problem"),
        ("non-canonical id", http_request("DELETE", "/people/01"), "problem"),
        ("odd method", http_request("PROPFIND", "/people"), "problem"),
        ("method not allowed", http_request("DELETE", "/people"), "problem"),
        ("invalid method token", b"G@T /people HTTP/1.1\r\nHost: x\r\n\r\n", "problem"),
        ("no Host header", b"GET /people HTTP/1.1\r\n\r\n", "problem"),
        ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "problem"),
        ("header flood", b"GET /people HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(2000)) + b"\r\n", "problem"),
        ("1 MB header", b"GET /people HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n", "problem"),
        ("header without colon", b"GET /people HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n", "problem"),
        ("NUL in the path", b"GET /peo\x00ple HTTP/1.1\r\nHost: x\r\n\r\n", "problem"),
        ("Content-Length not a number", b"POST /people HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n", "problem"),
        ("two Content-Lengths", b"POST /people HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "problem"),
        ("Content-Length and chunked", b"POST /people HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "problem"),
        ("bad chunk size", b"POST /people HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", "problem"),
        ("chunk longer than said", b"POST /people HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{\"name\":1}\r\n0\r\n\r\n", "problem"),
        ("body over the limit", http_request("POST", "/people", b'{"name": "' + b"x" * (2 << 20) + b'"}'), "problem"),
        ("request line only, then silence", b"GET /people HTTP/1.1\r\nHost: x\r\n", "problem"),
        ("half a request, then end of input", (b"POST /people HTTP/1.1\r\nHost: x\r\nContent-Length: 30\r\n\r\n{", True), "closed"),
        ("garbage", bytes(random.Random(7).randrange(256) for _ in range(4096)), "problem"),
        # Integer extremes in the query language: one of them took the server down (issue 24).
        ("_per_page=Int.max", http_request("GET", f"/people?_per_page={INT_MAX}"), "answered"),
        ("_page and _per_page at Int.max", http_request("GET", f"/people?_page={INT_MAX}&_per_page={INT_MAX}"), "answered"),
        ("nested _per_page=Int.max", http_request("GET", f"/people/1/cars?_page=2&_per_page={INT_MAX}"), "answered"),
        ("_start and _limit at Int.max", http_request("GET", f"/people?_start={INT_MAX}&_limit={INT_MAX}"), "answered"),
        ("_end=Int.max", http_request("GET", f"/people?_start=1&_end={INT_MAX}&_sort=-age"), "answered"),
        ("_start=Int.min", http_request("GET", f"/people?_start={INT_MIN}"), "problem"),
        ("_page beyond Int", http_request("GET", "/people?_page=99999999999999999999"), "problem"),
        ("filter at Int.min", http_request("GET", f"/people?age_gte={INT_MIN}&age_lte={INT_MAX}"), "answered"),
        # Values that were stored wrong.
        ("a double at 2^53 for an integer", http_request("POST", "/people", b'{"age": 9007199254740993.0}'), "problem"),
        ("a day that does not exist", http_request("POST", "/people", b'{"born": "2023-02-29"}'), "problem"),
        ("a key URLs cannot carry", http_request("POST", "/categories", json.dumps({"slug": "k" * 70_000}).encode()), "problem"),
        ("a dot-segment key", http_request("POST", "/categories", b'{"slug": ".."}'), "problem"),
        ("a parent that does not exist", http_request("POST", "/cars", b'{"name": "x", "person_id": 999}'), "problem"),
        # Protocols the server does not speak, and framing.
        ("websocket upgrade, then a pipelined GET",
         http_request("GET", "/people", headers=("Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
                                                 "Sec-WebSocket-Key: dGhlIHNhbXBsZQ=="))
         + http_request("GET", "/people/1", headers=("Connection: close",)), [200, 200]),
        ("h2c upgrade with a body, then a pipelined GET",
         http_request("PATCH", "/people/1", b'{"name": "seed"}', ("Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c",
                                                                "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"))
         + http_request("GET", "/people/1", headers=("Connection: close",)), [200, 200]),
        ("CONNECT, then tunnel bytes", b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n" + b"\x16" * 65536,
         "problem"),
        ("unknown transfer coding", b"POST /people HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n{}", "problem"),
        ("chunked, then another coding", b"POST /people HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
         "problem"),
        ("a complete request, then half of another",
         http_request("GET", "/people/1") + b"GET /people HTTP/1.1\r\nHost: x\r\nX-Half: ", [200, 408]),
    ]
    return corpus


class Checks:
    def __init__(self):
        self.rows = []
        self.failed = False
        self.since = time.time()

    def record(self, name, store, ok, figures):
        self.rows.append((name, store, "ok" if ok else "FAILED", figures))
        self.failed |= not ok
        elapsed, self.since = time.time() - self.since, time.time()
        print(f"  {'ok    ' if ok else 'FAILED'} {name} [{store}] {figures} ({elapsed:.0f} s)", flush=True)

    def table(self):
        lines = ["| check | store | result | figures |", "|---|---|---|---|"]
        lines += [f"| {name} | {store} | {result} | {figures} |" for name, store, result, figures in self.rows]
        return "\n".join(lines)


def check_bad_input(checks, binary, directory, store):
    server = Server(binary, directory, store)
    try:
        request(server.port, "POST", "/people", {"name": "seed", "age": 1})
        request(server.port, "POST", "/categories", {"slug": "garden"})
        request(server.port, "POST", "/people/1/cars", {"name": "mini"})
        failures = []
        corpus = bad_input_corpus()
        for name, data, expectation in corpus:
            half_close = False
            if isinstance(data, tuple):
                data, half_close = data
            try:
                before = snapshot(server.port)
            except OSError:
                failures.append(f"before {name}: the server died")
                break
            wanted = len(expectation) if isinstance(expectation, list) else (1 if expectation != "closed" else None)
            received, closed = raw_exchange(server.port, data, half_close=half_close, responses=wanted)
            responses = parse_responses(received)
            if expectation == "problem":
                if not responses or not (400 <= responses[0][0] < 500) \
                        or responses[0][1].get("content-type") != "application/problem+json":
                    failures.append(f"{name}: {received[:120]!r}")
                else:
                    try:
                        problem = json.loads(responses[0][2])
                        if problem.get("status") != responses[0][0]:
                            failures.append(f"{name}: problem status {problem.get('status')}")
                    except ValueError:
                        failures.append(f"{name}: the problem body is not JSON")
            elif expectation == "closed" and (responses or not closed):
                failures.append(f"{name}: expected a silent close, got {received[:80]!r}")
            elif expectation == "answered":
                if len(responses) != 1 or not (responses[0][0] == 200 or 400 <= responses[0][0] < 500):
                    failures.append(f"{name}: {received[:120]!r}")
                else:
                    try:
                        json.loads(responses[0][2])
                    except ValueError:
                        failures.append(f"{name}: the answer is not JSON")
            elif isinstance(expectation, list) and [status for status, _, _ in responses] != expectation:
                failures.append(f"{name}: statuses {[status for status, _, _ in responses]}, not {expectation}")
            try:
                if snapshot(server.port) != before:
                    failures.append(f"{name}: the data changed")
            except OSError:
                failures.append(f"{name}: the server died")
                break
        # SQL metacharacters in every field are data: stored and served verbatim, nothing else changes.
        sql = "'; DROP TABLE people; -- \" ) OR 1=1 /*"
        try:
            before = snapshot(server.port)
            status, headers, body = request(server.port, "POST", "/categories", {"slug": sql, "title": sql})
            location = headers.get("Location", "")
            if status != 201 or json.loads(body).get("slug") != sql:
                failures.append(f"SQL metacharacters: create answered {status}")
            elif json.loads(request(server.port, "GET", location)[2]).get("title") != sql:
                failures.append("SQL metacharacters: not read back verbatim")
            request(server.port, "DELETE", location)
            if snapshot(server.port) != before:
                failures.append("SQL metacharacters: other data changed")
        except OSError:
            failures.append("SQL metacharacters: the server is down")
        checks.record("bad-input corpus over raw sockets", store, not failures and server.alive(),
                      f"{len(corpus) + 1} cases" + ("; " + "; ".join(failures[:5]) if failures else
                                                     ": 4xx problem+json, alive, nothing changed"))
    finally:
        server.stop()


def check_concurrent_creates(checks, binary, directory, store, total):
    server = Server(binary, directory, store)
    try:
        ids, errors, lock = [], [], threading.Lock()

        def worker(count):
            connection = http_connection(server.port, 30)
            for index in range(count):
                try:
                    connection.request("POST", "/people", body=json.dumps({"name": f"p{index}"}),
                                       headers={"Content-Type": "application/json"})
                    response = connection.getresponse()
                    body = response.read()
                    with lock:
                        if response.status == 201:
                            ids.append(json.loads(body)["id"])
                        else:
                            errors.append(response.status)
                except Exception as error:  # noqa: BLE001 - any failure is a finding
                    with lock:
                        errors.append(repr(error))
                    connection = http_connection(server.port, 30)
            connection.close()

        threads = [threading.Thread(target=worker, args=(total // 50,)) for _ in range(50)]
        started = time.time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.time() - started
        listed = json.loads(request(server.port, "GET", "/people")[2])
        ok = not errors and len(ids) == total and len(set(ids)) == total and len(listed) == total
        checks.record(f"{total} concurrent creates (50 connections)", store, ok,
                      f"{len(set(ids))} distinct ids, {len(listed)} listed, {len(errors)} errors, {elapsed:.1f} s")
    finally:
        server.stop()


def check_sigkill(checks, binary, directory, rounds):
    """Writers create, update and delete their own records while the server is killed: after a restart
    every acknowledged write holds (a record created or updated has its last acknowledged name, a
    deleted one is gone); a write in flight at the kill may have landed or not, never half."""
    path = os.path.join(directory, "durability.sqlite")
    store = f"sqlite:{path}"
    expected = {}  # id -> the name last acknowledged, or None once a delete was acknowledged
    in_doubt = {}  # id -> the state a request in flight at the kill would leave
    highest_seen = 0
    counts = {"create": 0, "update": 0, "delete": 0}
    failures = []
    for round_number in range(rounds):
        server = Server(binary, directory, store)
        stop = threading.Event()
        lock = threading.Lock()

        def writer(seed):
            nonlocal highest_seen
            generator = random.Random(seed)
            connection = http_connection(server.port, 5)
            mine = [key for key, name in expected.items() if name is not None and key % 8 == seed % 8]
            index = 0
            while not stop.is_set():
                index += 1
                name = f"r{round_number}-{seed}-{index}"
                choice = generator.random()
                try:
                    if mine and choice < 0.3:
                        key = generator.choice(mine)
                        with lock:
                            in_doubt[key] = name
                        connection.request("PATCH", f"/people/{key}", body=json.dumps({"name": name}),
                                           headers={"Content-Type": "application/json"})
                        response = connection.getresponse()
                        response.read()
                        if response.status == 200:
                            with lock:
                                expected[key] = name
                                del in_doubt[key]
                                counts["update"] += 1
                    elif mine and choice < 0.5:
                        key = mine.pop(generator.randrange(len(mine)))
                        with lock:
                            in_doubt[key] = None
                        connection.request("DELETE", f"/people/{key}")
                        response = connection.getresponse()
                        response.read()
                        if response.status == 204:
                            with lock:
                                expected[key] = None
                                del in_doubt[key]
                                counts["delete"] += 1
                    else:
                        connection.request("POST", "/people", body=json.dumps({"name": name}),
                                           headers={"Content-Type": "application/json"})
                        response = connection.getresponse()
                        body = response.read()
                        if response.status == 201:
                            record = json.loads(body)
                            with lock:
                                expected[record["id"]] = name
                                highest_seen = max(highest_seen, record["id"])
                                counts["create"] += 1
                            if record["id"] % 8 == seed % 8:
                                mine.append(record["id"])
                except Exception:  # noqa: BLE001 - the kill cuts requests off; only acknowledged ones count
                    return

        threads = [threading.Thread(target=writer, args=(seed,)) for seed in range(8)]
        for thread in threads:
            thread.start()
        time.sleep(random.uniform(0.5, 1.5))
        server.stop(kill=True)
        stop.set()
        for thread in threads:
            thread.join()
        # Restart and check every acknowledged write.
        server = Server(binary, directory, store)
        try:
            records = {record["id"]: record["name"] for record in json.loads(request(server.port, "GET", "/people")[2])}
            wrong = []
            for key, name in expected.items():
                actual = records.get(key)
                if actual == name or (key in in_doubt and actual == in_doubt[key]):
                    continue
                wrong.append(key)
            if wrong:
                failures.append(f"round {round_number + 1}: {len(wrong)} acknowledged writes lost or wrong")
            # Settle what was in doubt: the file decides, and the next round starts from it.
            for key in list(in_doubt):
                expected[key] = records.get(key)
            in_doubt.clear()
            status, _, body = request(server.port, "POST", "/people", {"name": "after"})
            new_id = json.loads(body)["id"]
            if new_id <= max(highest_seen, max(records) if records else 0):
                failures.append(f"round {round_number + 1}: id {new_id} reused")
            request(server.port, "DELETE", f"/people/{new_id}")
        finally:
            server.stop()
    checks.record(f"SIGKILL during creates, updates and deletes, {rounds} rounds", "sqlite", not failures,
                  f"{counts['create']} creates, {counts['update']} updates, {counts['delete']} deletes acknowledged, "
                  "all as acknowledged after restart, ids never reused" if not failures else "; ".join(failures))


def check_integrity_race(checks, binary, directory, store, rounds):
    """A parent's DELETE races a nested create and a PATCH that moves a car to it: no car may end up
    pointing at a deleted parent."""
    server = Server(binary, directory, store)
    try:
        dangling, outcomes = 0, {}
        for round_number in range(rounds):
            parent = json.loads(request(server.port, "POST", "/people", {"name": f"parent {round_number}"})[2])["id"]
            other = json.loads(request(server.port, "POST", "/people", {"name": f"other {round_number}"})[2])["id"]
            car = json.loads(request(server.port, "POST", "/cars", {"name": "moved", "person_id": other})[2])["id"]
            statuses = {}
            calls = {
                "delete": ("DELETE", f"/people/{parent}", None),
                "create": ("POST", f"/people/{parent}/cars", {"name": "new"}),
                "move": ("PATCH", f"/cars/{car}", {"person_id": parent}),
            }

            def call(name):
                method, path, body = calls[name]
                statuses[name] = request(server.port, method, path, body)[0]

            threads = [threading.Thread(target=call, args=(name,)) for name in calls]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            key = f"create {statuses['create']}, move {statuses['move']}"
            outcomes[key] = outcomes.get(key, 0) + 1
            people = {record["id"] for record in json.loads(request(server.port, "GET", "/people")[2])}
            dangling += sum(1 for record in json.loads(request(server.port, "GET", "/cars")[2])
                            if record["person_id"] is not None and record["person_id"] not in people)
        seen = ", ".join(f"{count}× {key}" for key, count in sorted(outcomes.items()))
        checks.record(f"parent DELETE racing child writes, {rounds} rounds", store, dangling == 0 and server.alive(),
                      f"{dangling} cars left pointing at a deleted parent; outcomes {seen}")
    finally:
        server.stop()


def check_hostile_memory(checks, binary, directory, store, limit_mib):
    """What one hostile connection can make the server hold, as growth of its resident memory: a client
    that pipelines 100 requests for a 475 KiB list and reads nothing, an upgrade followed by 64 MiB,
    CONNECT followed by 64 MiB."""
    server = Server(binary, directory, store)
    try:
        for index in range(50):
            request(server.port, "POST", "/people", {"name": f"{index}" + "x" * 9500})
        list_size = len(request(server.port, "GET", "/people")[2])
        for _ in range(20):
            request(server.port, "GET", "/people")  # warm the allocator with lists of this size

        def peak_growth(action):
            baseline = server.rss_kib()
            peak = [baseline]
            done = threading.Event()

            def sample():
                while not done.is_set():
                    peak[0] = max(peak[0], server.rss_kib())
                    time.sleep(0.05)

            sampler = threading.Thread(target=sample)
            sampler.start()
            try:
                action()
            finally:
                done.set()
                sampler.join()
            return (peak[0] - baseline) / 1024

        def never_reads():
            sock = open_connection(server.port, timeout=10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            sock.sendall(b"".join(http_request("GET", "/people") for _ in range(100)))
            time.sleep(3)
            sock.close()

        def flood_after(head):
            def action():
                sock = open_connection(server.port, timeout=10)
                chunk = b"y" * (1 << 20)
                try:
                    sock.sendall(head)
                    for _ in range(64):
                        sock.sendall(chunk)
                except OSError:
                    pass  # the server closing the connection early is fine
                time.sleep(1)
                sock.close()
            return action

        upgrade = http_request("GET", "/people/1", headers=("Connection: Upgrade", "Upgrade: websocket"))
        connect = b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"
        growth = {
            "never reads 100 lists": peak_growth(never_reads),
            "upgrade + 64 MiB": peak_growth(flood_after(upgrade)),
            "CONNECT + 64 MiB": peak_growth(flood_after(connect)),
        }
        alive = server.alive() and request(server.port, "GET", "/people/1")[0] == 200
        worst = max(growth.values())
        checks.record(f"memory one hostile connection holds (bound {limit_mib} MiB)", store,
                      worst < limit_mib and alive,
                      f"list {list_size // 1024} KiB; " + ", ".join(f"{name}: +{mib:.1f} MiB" for name, mib in growth.items()))
    finally:
        server.stop()


def check_soak(checks, binary, directory, store, seconds):
    server = Server(binary, directory, store)
    try:
        errors, counts, lock, stop = [], {"requests": 0}, threading.Lock(), threading.Event()

        def worker(seed):
            generator = random.Random(seed)
            connection = http_connection(server.port, 10)
            mine = []
            while not stop.is_set():
                choice = generator.random()
                try:
                    if len(mine) >= 50:  # the data stay bounded, so memory growth would be a leak
                        connection.request("DELETE", f"/people/{mine.pop(generator.randrange(len(mine)))}")
                    elif choice < 0.3 or not mine:
                        connection.request("POST", "/people", body=json.dumps({"name": "soak", "age": generator.randrange(90)}),
                                           headers={"Content-Type": "application/json"})
                    elif choice < 0.5:
                        connection.request("PATCH", f"/people/{generator.choice(mine)}", body=json.dumps({"age": 1}),
                                           headers={"Content-Type": "application/json"})
                    elif choice < 0.65:
                        connection.request("DELETE", f"/people/{mine.pop(generator.randrange(len(mine)))}")
                    elif choice < 0.8:
                        connection.request("GET", f"/people/{generator.choice(mine)}")
                    else:
                        connection.request("GET", "/people/1/cars" if choice < 0.85 else "/categories")
                    response = connection.getresponse()
                    body = response.read()
                    if response.status >= 500 or (response.status >= 400 and response.status != 404):
                        with lock:
                            errors.append(response.status)
                    if response.status == 201:
                        mine.append(json.loads(body)["id"])
                    with lock:
                        counts["requests"] += 1
                except Exception as error:  # noqa: BLE001
                    with lock:
                        errors.append(repr(error))
                    connection = http_connection(server.port, 10)

        threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(8)]
        for thread in threads:
            thread.start()
        samples = []
        started = time.time()
        while time.time() - started < seconds:
            time.sleep(min(5, seconds / 6))
            samples.append((server.rss_kib(), server.descriptors()))
        stop.set()
        for thread in threads:
            thread.join()
        warm = samples[len(samples) // 3:]
        rss_growth = (warm[-1][0] - warm[0][0]) / 1024
        descriptors = [fds for _, fds in samples]
        ok = not errors and rss_growth < 4 and max(descriptors) - min(descriptors) <= 4 and server.alive()
        checks.record(f"{seconds} s mixed soak (8 connections)", store, ok,
                      f"{counts['requests']} requests, {len(errors)} errors, RSS {warm[0][0] // 1024}→{warm[-1][0] // 1024} MiB, "
                      f"descriptors {min(descriptors)}–{max(descriptors)}")
    finally:
        server.stop()


def check_slowloris(checks, binary, directory, store, connections):
    server = Server(binary, directory, store)
    try:
        baseline = server.descriptors()
        slow = []
        for _ in range(connections):
            sock = open_connection(server.port)
            sock.sendall(b"GET /people HTTP/1.1\r\nHost: x\r\n")
            slow.append(sock)
        latencies, errors = [], []
        started = time.time()
        while time.time() - started < 3:
            for sock in slow:
                try:
                    sock.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    pass
            begin = time.time()
            try:
                status, _, _ = request(server.port, "GET", "/people", timeout=5)
                if status != 200:
                    errors.append(status)
            except Exception as error:  # noqa: BLE001
                errors.append(repr(error))
            latencies.append(time.time() - begin)
            time.sleep(0.1)
        held = server.descriptors()
        timed_out = 0
        for sock in slow:
            sock.settimeout(5)
            try:
                data = sock.recv(65536)
                timed_out += data.startswith(b"HTTP/1.1 408")
            except OSError:
                pass
            sock.close()
        deadline = time.time() + 10
        while time.time() < deadline and server.descriptors() > baseline:
            time.sleep(0.1)
        after = server.descriptors()
        worst = max(latencies) * 1000
        ok = not errors and timed_out == connections and after <= baseline
        checks.record(f"slowloris: {connections} slow connections", store, ok,
                      f"normal client {len(latencies)} requests, worst {worst:.0f} ms, {len(errors)} errors; "
                      f"{timed_out} slow ones got 408; descriptors {baseline}→{held}→{after}")
    finally:
        server.stop()


def websocket(port, path="/ws/echo", timeout=10):
    """A connection upgraded to a WebSocket on `path` (the 101 read), or raises."""
    sock = open_connection(port, timeout=timeout)
    sock.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 b"Sec-WebSocket-Version: 13\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        data = sock.recv(4096)
        if not data:
            raise RuntimeError("closed before the 101")
        head += data
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(head.split(b"\r\n", 1)[0].decode(errors="replace"))
    return sock


def masked_frame(opcode, payload, fin=True):
    """A client's frame: masked, as RFC 6455 requires."""
    head = bytes([(0x80 if fin else 0) | opcode])
    length = len(payload)
    if length < 126:
        head += bytes([0x80 | length])
    elif length < 65536:
        head += bytes([0x80 | 126]) + length.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + length.to_bytes(8, "big")
    key = b"\x37\xfa\x21\x3d"
    return head + key + bytes(byte ^ key[index % 4] for index, byte in enumerate(payload))


def close_code(sock, timeout=10):
    """The code of the server's close frame, reading past its other frames; None if the connection ends first."""
    sock.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
            code = close_frame_code(data)
            if code is not None:
                return code
    except OSError:
        return None


def check_websockets(checks, binary, directory, store):
    """WebSocket clients a server must survive: one that floods an echo with 64 MiB and reads nothing (held
    memory, bounded by backpressure), frames that break the protocol (a length of 2^63, an unmasked frame,
    a reserved opcode: each closed with its code; random bytes: the connection ends), and 100 silent sockets at the stop (closed with 1001, and
    the stop returns)."""
    server = Server(binary, directory, store)
    try:
        for _ in range(5):  # warm the allocator with a few echoes
            sock = websocket(server.port)
            sock.sendall(masked_frame(2, b"w" * 65536))
            sock.recv(65536)
            sock.close()
        baseline = server.rss_kib()
        peak = [baseline]
        flood = websocket(server.port)
        flood.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        frame = masked_frame(2, b"f" * 65536)
        sent = 0
        flood.settimeout(5)
        try:
            for _ in range(1024):  # 64 MiB
                flood.sendall(frame)
                sent += len(frame)
                if sent % (8 << 20) < len(frame):
                    peak[0] = max(peak[0], server.rss_kib())
        except OSError:
            pass  # the server stopped reading: backpressure, as it should
        time.sleep(1)
        peak[0] = max(peak[0], server.rss_kib())
        flood.close()
        growth = (peak[0] - baseline) / 1024

        codes = {}
        for name, data in [("length 2^63", bytes([0x82, 0xFF]) + (1 << 63).to_bytes(8, "big") + b"\x00" * 4),
                           ("unmasked", bytes([0x81, 0x02]) + b"hi"), ("reserved opcode", masked_frame(3, b"x"))]:
            sock = websocket(server.port)
            sock.sendall(data)
            codes[name] = close_code(sock)
            sock.close()
        # Random bytes may announce a frame longer than what follows: the server waits for the rest, and
        # the client's end of input (or else the idle timeout) ends the connection. Over TLS the client
        # cannot end its input and go on reading (Python's SSLSocket.shutdown drops the TLS layer, so later
        # reads parsed raw records as frames: a miscount in one CI run), so there the idle timeout ends it
        # (5 s, a ping, 5 s more); the three connections wait at once to bound that to about 10 s.
        garbage = [bytes(random.getrandbits(8) for _ in range(64)) for _ in range(3)]

        def garbage_ends(data):
            sock = websocket(server.port)
            try:
                sock.sendall(data)
                if not HTTPS:
                    sock.shutdown(socket.SHUT_WR)
                close_code(sock, timeout=15)
                sock.settimeout(5)
                return sock.recv(1) == b""
            except socket.timeout:
                return False  # still open 20 s on: it did not end
            except OSError:
                return True  # reset, or TLS cut without its close_notify: ended all the same
            finally:
                sock.close()

        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            garbage_ended = sum(pool.map(garbage_ends, garbage))
        codes["garbage, ended"] = f"{garbage_ended}/3"
        protocol_ok = (codes["length 2^63"] in (1009, 1002) and codes["unmasked"] == 1002
                       and codes["reserved opcode"] == 1002 and garbage_ended == 3)

        idle = [websocket(server.port) for _ in range(100)]
        alive = server.alive() and request(server.port, "GET", "/people")[0] == 200
        began = time.time()
        server.process.send_signal(signal.SIGINT)
        going_away = sum(close_code(sock) == 1001 for sock in idle)
        try:
            server.process.wait(timeout=20)
            stop_seconds = time.time() - began
        except subprocess.TimeoutExpired:
            stop_seconds = None
        for sock in idle:
            sock.close()
        ok = growth < 16 and protocol_ok and alive and going_away == 100 and stop_seconds is not None
        checks.record("WebSocket: flood, broken frames, the stop", store, ok,
                      f"64 MiB flood read by no one: +{growth:.1f} MiB (sent {sent >> 20} MiB before backpressure); "
                      f"close codes {codes}; stop: {going_away}/100 got 1001, exited in "
                      f"{'never' if stop_seconds is None else f'{stop_seconds:.1f} s'}")
    finally:
        server.stop()


def check_descriptor_exhaustion(checks, binary, directory, store):
    server = Server(binary, directory, store, limit_descriptors=64)
    try:
        held = []
        for _ in range(100):
            try:
                sock = open_connection(server.port, timeout=2)
                held.append(sock)
            except OSError:
                break
        cpu_before = server.cpu_seconds()
        time.sleep(2)
        spin = server.cpu_seconds() - cpu_before
        for sock in held:
            sock.close()
        served = False
        deadline = time.time() + 15
        while time.time() < deadline and not served:
            try:
                served = request(server.port, "GET", "/people", timeout=2)[0] == 200
            except OSError:
                time.sleep(0.2)
        ok = served and spin < 0.5 and server.alive()
        checks.record("out of descriptors (limit 64, 100 connections)", store, ok,
                      f"CPU while exhausted {spin:.2f} s in 2 s; serving again afterwards: {served}")
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--quick", action="store_true", help="the short version CI runs")
    parser.add_argument("--table", help="also write the results as a Markdown table to this file")
    parser.add_argument("--tls", action="store_true", help="every check over TLS: servers with --https, clients "
                        "trusting the run's own certificate authority")
    parser.add_argument("--http2", action="store_true", help="the HTTP/2 checks instead (hostile frames, slow "
                        "clients, floods), over TLS with h2 agreed by ALPN; needs the h2 package (.venv)")
    parser.add_argument("--only", help="run only the checks whose names contain this (bad-input, creates, "
                        "sigkill, integrity, memory, soak, slowloris, descriptors, websocket, backend)")
    options = parser.parse_args()
    random.seed(11)
    checks = Checks()
    directory = tempfile.mkdtemp(prefix="hammock-reliability-")
    if options.tls or options.http2:
        global TLS, HTTPS, CA_DIRECTORY
        HTTPS = True
        CA_DIRECTORY = os.path.join(directory, "ca")
        # The first server makes the authority; a throwaway start here, so the context can trust it.
        Server(options.binary, directory, "memory").stop()
        TLS = ssl.create_default_context(cafile=os.path.join(CA_DIRECTORY, "hammock-ca.pem"))
    soak = 10 if options.quick else 60
    creates = 300 if options.quick else 1000
    rounds = 2 if options.quick else 5
    races = 20 if options.quick else 60
    slowloris = 50 if options.quick else 200
    started = time.time()

    def wanted(name):
        return options.only is None or options.only in name

    def on_both_stores(name, check, *arguments):
        for store in ("memory", f"sqlite:{directory}/{name}.sqlite"):
            check(checks, options.binary, directory, store, *arguments)
            checks.rows[-1] = (checks.rows[-1][0], store.split(":")[0], *checks.rows[-1][2:])

    try:
        if options.http2:
            import reliability_http2
            reliability_http2.run(checks, Server, options.binary, directory, os.path.join(CA_DIRECTORY, "hammock-ca.pem"),
                                  snapshot, options.quick, wanted)
            return finish(checks, options, started)
        if wanted("bad-input"):
            on_both_stores("corpus", check_bad_input)
        if wanted("creates"):
            on_both_stores("creates", check_concurrent_creates, creates)
        if wanted("sigkill"):
            check_sigkill(checks, options.binary, directory, rounds)
        if wanted("integrity"):
            on_both_stores("integrity", check_integrity_race, races)
        if wanted("memory"):
            on_both_stores("memory", check_hostile_memory, 16)
        if wanted("soak"):
            on_both_stores("soak", check_soak, soak)
        if wanted("slowloris"):
            check_slowloris(checks, options.binary, directory, "memory", slowloris)
        if wanted("descriptors"):
            check_descriptor_exhaustion(checks, options.binary, directory, "memory")
        if wanted("websocket"):
            check_websockets(checks, options.binary, directory, "memory")
        if wanted("backend"):
            import reliability_backend
            reliability_backend.run(checks, Server, options.binary, directory, open_connection, request)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return finish(checks, options, started)


def finish(checks, options, started):
    print()
    print(checks.table())
    print(f"\n{len(checks.rows)} checks in {time.time() - started:.0f} s: {'FAILED' if checks.failed else 'all passed'}")
    if options.table:
        with open(options.table, "w") as file:
            file.write(checks.table() + "\n")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The reliability suite's HTTP/2 checks (`scripts/reliability --http2`): hostile frames, slow clients and
floods over HTTP/2 streams, against `hammock serve --https` with `h2` agreed by ALPN.

The frames are written by hand (hyperframe for their layout, hpack for header blocks), not through a
client library's state machine, so a check can send what no well-behaved client would: a request with
no path, a field in upper case, more body than it declared, a frame over the size limit, thousands of
streams opened and reset. Needs the packages of scripts/requirements-tests.txt (`h2` brings hpack and
hyperframe), which `scripts/setup --tests` installs into .venv.
"""

import socket
import ssl
import threading
import time

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, PingFrame,
                              RstStreamFrame, SettingsFrame, WindowUpdateFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
CANCEL = 0x8
REFUSED_STREAM = 0x7


class Connection:
    """One TLS connection that agreed on h2, and the frames the check writes on it."""

    def __init__(self, port, ca_file, preface=True, timeout=10):
        context = ssl.create_default_context(cafile=ca_file)
        context.set_alpn_protocols(["h2"])
        raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock = context.wrap_socket(raw, server_hostname="127.0.0.1")
        if self.sock.selected_alpn_protocol() != "h2":
            raise RuntimeError(f"ALPN agreed on {self.sock.selected_alpn_protocol()!r}, not h2")
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.buffer = b""
        self.closed = False
        if preface:
            self.send(PREFACE + SettingsFrame(0).serialize())

    def send(self, data):
        try:
            self.sock.sendall(data)
        except OSError:
            self.closed = True

    def frame(self, frame):
        self.send(frame.serialize())

    def headers(self, stream, fields, end_stream=True):
        frame = HeadersFrame(stream)
        frame.data = self.encoder.encode(fields)
        frame.flags.add("END_HEADERS")
        if end_stream:
            frame.flags.add("END_STREAM")
        return frame

    def request(self, stream, method, path, end_stream=True, extra=()):
        fields = [(":method", method), (":scheme", "https"), (":path", path), (":authority", "127.0.0.1"), *extra]
        return self.headers(stream, fields, end_stream)

    def read_frame(self, timeout):
        """The next frame, or None when the server closed or `timeout` passed with nothing."""
        self.sock.settimeout(timeout)
        try:
            while len(self.buffer) < 9:
                chunk = self.sock.recv(65536)
                if not chunk:
                    self.closed = True
                    return None
                self.buffer += chunk
            frame, length = Frame.parse_frame_header(memoryview(self.buffer[:9]))
            while len(self.buffer) < 9 + length:
                chunk = self.sock.recv(65536)
                if not chunk:
                    self.closed = True
                    return None
                self.buffer += chunk
        except socket.timeout:
            return None
        except (OSError, ssl.SSLError):
            self.closed = True
            return None
        frame.parse_body(memoryview(self.buffer[9:9 + length]))
        self.buffer = self.buffer[9 + length:]
        if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
            self.frame(SettingsFrame(0, flags=["ACK"]))
        elif isinstance(frame, PingFrame) and "ACK" not in frame.flags:
            self.frame(PingFrame(0, opaque_data=frame.opaque_data, flags=["ACK"]))
        elif isinstance(frame, DataFrame) and frame.flow_controlled_length:
            # Keep the windows open: the checks are about the server, not about flow control.
            self.frame(WindowUpdateFrame(0, window_increment=frame.flow_controlled_length))
            if "END_STREAM" not in frame.flags:
                self.frame(WindowUpdateFrame(frame.stream_id, window_increment=frame.flow_controlled_length))
        return frame

    def outcomes(self, streams, timeout=10):
        """What became of each stream: ('answer', status, fields, body), ('reset', code), ('goaway', code),
        ('closed',) when the connection ended without a word about it, ('silent',) when time ran out."""
        pending = {stream: {"status": None, "fields": {}, "body": b""} for stream in streams}
        results = {}
        deadline = time.time() + timeout
        while pending and time.time() < deadline:
            frame = self.read_frame(max(deadline - time.time(), 0.01))
            if frame is None:
                if self.closed:
                    break
                continue
            if isinstance(frame, GoAwayFrame):
                for stream in list(pending):
                    if stream > frame.last_stream_id:
                        results[stream] = ("goaway", frame.error_code)
                        del pending[stream]
                continue
            state = pending.get(frame.stream_id)
            if state is None:
                continue
            if isinstance(frame, RstStreamFrame):
                results[frame.stream_id] = ("reset", frame.error_code)
                del pending[frame.stream_id]
                continue
            if isinstance(frame, (HeadersFrame, ContinuationFrame)):
                fields = dict(self.decoder.decode(frame.data))
                if fields.get(":status", "").startswith("1"):
                    continue
                state["status"] = int(fields.get(":status", "0"))
                state["fields"] = fields
            elif isinstance(frame, DataFrame):
                state["body"] += frame.data
            if "END_STREAM" in frame.flags:
                results[frame.stream_id] = ("answer", state["status"], state["fields"], state["body"])
                del pending[frame.stream_id]
        for stream in pending:
            results[stream] = ("closed",) if self.closed else ("silent",)
        return results

    def until_ended(self, seconds, stop_at_goaway):
        """Reads until the server says GOAWAY (if `stop_at_goaway`) or closes: ("GOAWAY code" or "closed" or
        None, whether the connection closed)."""
        ended = None
        deadline = time.time() + seconds
        while time.time() < deadline:
            frame = self.read_frame(1)
            if isinstance(frame, GoAwayFrame):
                ended = f"GOAWAY {frame.error_code}"
                if stop_at_goaway:
                    break
            if frame is None and self.closed:
                ended = ended or "closed"
                break
        return ended, self.closed

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def hostile_cases():
    """(name, what the client sends on a fresh connection, what must follow): 'problem' a 4xx
    problem+json answer on stream 1; 'refused' stream 1 reset or the connection ended (GOAWAY or close),
    never an answer; 'either' one of the two."""
    big = "x" * (80 << 10)

    def plain(fields, end_stream=True):
        return lambda c: c.frame(c.headers(1, fields, end_stream))

    def with_body(extra, body, end_stream=True, declared=None):
        def send(c):
            fields = [("content-type", "application/json"), *extra]
            if declared is not None:
                fields.append(("content-length", str(declared)))
            c.frame(c.request(1, "POST", "/people", end_stream=False, extra=fields))
            c.frame(DataFrame(1, data=body, flags=["END_STREAM"] if end_stream else []))
        return send

    base = [(":scheme", "https"), (":authority", "127.0.0.1")]
    return [
        ("a request with no :path", plain([(":method", "GET"), *base]), "refused"),
        ("a request with no :method", plain([(":path", "/people"), *base]), "refused"),
        ("a field name in upper case", plain([(":method", "GET"), (":path", "/people"), *base, ("X-Bad", "1")]),
         "refused"),
        ("a pseudo-header after a regular field",
         plain([(":method", "GET"), ("accept", "*/*"), (":path", "/people"), *base]), "refused"),
        ("a connection-specific field", plain([(":method", "GET"), (":path", "/people"), *base,
                                               ("connection", "keep-alive")]), "refused"),
        ("an unknown pseudo-header", plain([(":method", "GET"), (":path", "/people"), *base, (":bogus", "1")]),
         "refused"),
        ("a method that is not a token", plain([(":method", "GE T"), (":path", "/people"), *base]), "either"),
        ("a path that is not origin-form", plain([(":method", "GET"), (":path", "people"), *base]), "either"),
        ("CONNECT", plain([(":method", "CONNECT"), (":authority", "127.0.0.1:1")]), "either"),
        ("more body than the content-length says", with_body([], b'{"name": "too long"}', declared=3), "refused"),
        ("less body than the content-length says", with_body([], b'{"n', declared=30), "refused"),
        ("a content-length over the body limit", lambda c: c.frame(c.request(
            1, "POST", "/people", end_stream=False, extra=[("content-type", "application/json"),
                                                          ("content-length", str(5 << 20))])), "problem"),
        ("malformed JSON", with_body([], b'{"name": '), "problem"),
        ("a JSON body of the wrong type", with_body([], b'{"age": "old"}'), "problem"),
        ("a header list over the limit",
         plain([(":method", "GET"), (":path", "/people"), *base, ("x-big", big)]), "either"),
        ("DATA on a stream never opened", lambda c: c.frame(DataFrame(1, data=b"{}", flags=["END_STREAM"])),
         "refused"),
        ("a frame over the size limit", lambda c: (
            c.frame(c.request(1, "POST", "/people", end_stream=False, extra=[("content-type", "application/json")])),
            c.frame(DataFrame(1, data=b" " * 20000))), "refused"),
        ("a stream id the client may not use", lambda c: c.frame(c.request(2, "GET", "/people")), "refused"),
        ("a window update of zero", lambda c: (c.frame(WindowUpdateFrame(0, window_increment=0)),
                                               c.frame(c.request(1, "GET", "/people"))), "refused"),
        ("a window over 2^31-1", lambda c: (c.frame(SettingsFrame(0, settings={0x4: 1 << 31})),
                                            c.frame(c.request(1, "GET", "/people"))), "refused"),
        ("HEADERS never ended (CONTINUATION expected)", lambda c: (
            c.frame(HeadersFrame(1, data=c.encoder.encode([(":method", "GET")]))),
            c.frame(DataFrame(1, data=b"x"))), "refused"),
        ("not a preface at all", lambda c: c.send(b"GET /people HTTP/1.1\r\nHost: x\r\n\r\n"), "refused"),
    ]


def check_hostile_frames(checks, server_class, binary, directory, store, ca_file, snapshot):
    server = server_class(binary, directory, store)
    try:
        from_http1 = snapshot(server.port)
        failures = []
        cases = hostile_cases()
        for name, send, expectation in cases:
            connection = Connection(server.port, ca_file, preface=name != "not a preface at all")
            try:
                send(connection)
                outcome = connection.outcomes([1], timeout=8)[1]
            finally:
                connection.close()
            answered = outcome[0] == "answer"
            if answered and outcome[1] >= 500:
                failures.append(f"{name}: {outcome[1]}")
            elif expectation == "refused" and answered:
                failures.append(f"{name}: answered {outcome[1]}, not refused")
            elif expectation == "problem" and not (answered and 400 <= outcome[1] < 500
                                                   and outcome[2].get("content-type") == "application/problem+json"):
                failures.append(f"{name}: {outcome[:2]}")
            elif outcome[0] == "silent":
                failures.append(f"{name}: no answer and no end in 8 s")
            if not server.alive():
                failures.append(f"{name}: the server died")
                break
        if server.alive() and snapshot(server.port) != from_http1:
            failures.append("the data changed")
        checks.record("hostile HTTP/2 frames", store, not failures and server.alive(),
                      f"{len(cases)} cases" + ("; " + "; ".join(failures[:5]) if failures else
                                               ": 4xx problem+json or the stream reset, alive, nothing changed"))
    finally:
        server.stop()


def stream_error_cases():
    """(name, the headers of a request NIO refuses as a stream's error, not the connection's): each is
    sent on a connection where an event stream is open and followed by a good request."""
    base = [(":method", "GET"), (":scheme", "https"), (":path", "/people"), (":authority", "127.0.0.1")]
    return [
        ("a field name in upper case", [*base, ("X-Bad", "1")]),
        ("a connection-specific field", [*base, ("connection", "keep-alive")]),
        ("a pseudo-header after a regular field", [base[0], ("accept", "*/*"), *base[1:]]),
        ("an unknown pseudo-header", [*base, (":bogus", "1")]),
        ("a request with no :path", [base[0], base[1], base[3]]),
    ]


def check_stream_errors(checks, server_class, binary, directory, store, ca_file):
    """A stream's error is its own (RFC 9113 §5.4.2): on a connection where an event stream is open, a
    request NIO refuses is reset, and the event stream and the next request on the same connection carry
    on. (Every such error once closed the whole connection: a browser's page for one bad request.)"""
    server = server_class(binary, directory, store)
    try:
        failures = []
        for name, fields in stream_error_cases():
            connection = Connection(server.port, ca_file)
            try:
                connection.frame(connection.request(1, "GET", "/__hammock/events"))
                connection.frame(connection.headers(3, fields))
                connection.frame(connection.request(5, "GET", "/people"))
                outcomes = connection.outcomes([3, 5], timeout=8)
                if outcomes[3][0] != "reset":
                    failures.append(f"{name}: the bad stream {outcomes[3][:2]}, not reset")
                if outcomes[5][:2] != ("answer", 200):
                    failures.append(f"{name}: the next request {outcomes[5][:2]}")
                # The event stream is still open: a request after the error shows in it.
                connection.frame(connection.request(7, "GET", "/after-the-error"))
                seen = b""
                deadline = time.time() + 8
                while b"/after-the-error" not in seen and time.time() < deadline:
                    frame = connection.read_frame(max(deadline - time.time(), 0.01))
                    if frame is None and connection.closed:
                        break
                    if isinstance(frame, DataFrame) and frame.stream_id == 1:
                        seen += frame.data
                if b"/after-the-error" not in seen:
                    failures.append(f"{name}: the event stream " + ("was closed" if connection.closed else
                                                                    "showed no request in 8 s"))
            finally:
                connection.close()
            if not server.alive():
                failures.append(f"{name}: the server died")
                break
        checks.record("HTTP/2 stream errors stay the stream's", store, not failures and server.alive(),
                      f"{len(stream_error_cases())} cases" + ("; " + "; ".join(failures[:5]) if failures else
                                                              ": each reset alone; the event stream and the "
                                                              "next request on its connection carried on"))
    finally:
        server.stop()


def check_slow_clients(checks, server_class, binary, directory, store, ca_file, streams, silent):
    """Streams whose bodies stop arriving get 408 at the request timeout (2 s); connections that open no
    stream get GOAWAY at the idle timeout (5 s); a normal client meanwhile is answered at once."""
    server = server_class(binary, directory, store)
    try:
        baseline = server.descriptors()
        slow = Connection(server.port, ca_file)
        ids = list(range(1, 2 * streams, 2))
        for stream in ids:
            slow.frame(slow.request(stream, "POST", "/people", end_stream=False,
                                    extra=[("content-type", "application/json")]))
            slow.frame(DataFrame(stream, data=b'{"na'))
        quiet = [Connection(server.port, ca_file) for _ in range(silent)]
        latencies, errors = [], []
        results = {}
        reader = threading.Thread(target=lambda: results.update(slow.outcomes(ids, timeout=15)))
        reader.start()
        started = time.time()
        while time.time() - started < 2.5:
            normal = Connection(server.port, ca_file)
            begin = time.time()
            normal.frame(normal.request(1, "GET", "/people"))
            outcome = normal.outcomes([1], timeout=5)[1]
            latencies.append(time.time() - begin)
            normal.close()
            if outcome[:2] != ("answer", 200):
                errors.append(outcome[:2])
            time.sleep(0.1)
        reader.join()
        timed_out = sum(1 for r in results.values() if r[0] == "answer" and r[1] == 408)
        went_away = 0
        for connection in quiet:
            frame = connection.read_frame(10)
            while frame is not None and not isinstance(frame, GoAwayFrame):
                frame = connection.read_frame(10)
            went_away += isinstance(frame, GoAwayFrame)
            connection.close()
        slow.close()
        deadline = time.time() + 10
        while time.time() < deadline and server.descriptors() > baseline:
            time.sleep(0.1)
        after = server.descriptors()
        ok = not errors and timed_out == streams and went_away == silent and after <= baseline and server.alive()
        checks.record(f"slow HTTP/2 clients: {streams} streams, {silent} silent connections", store, ok,
                      f"normal client {len(latencies)} requests, worst {max(latencies) * 1000:.0f} ms, "
                      f"{len(errors)} errors; {timed_out} slow streams got 408; {went_away} silent connections "
                      f"got GOAWAY; descriptors {baseline}→{after}")
    finally:
        server.stop()


def check_floods(checks, server_class, binary, directory, store, ca_file, resets):
    """Rapid reset (CVE-2023-44487), more streams than allowed, and a PING flood: each connection is
    ended, the server's memory stays bounded, and a normal client is answered after them."""
    server = server_class(binary, directory, store)
    try:
        failures = []
        rss_before = server.rss_kib()
        cpu_before = server.cpu_seconds()
        # Rapid reset: open a stream and cancel it at once, over and over, without reading.
        flood = Connection(server.port, ca_file)
        batch = b"".join(flood.request(stream, "GET", "/people").serialize()
                         + RstStreamFrame(stream, error_code=CANCEL).serialize()
                         for stream in range(1, 2 * resets, 2))
        flood.send(batch)
        ended, _ = flood.until_ended(15, stop_at_goaway=True)
        flood.close()
        if ended is None:
            failures.append("rapid reset: the connection was neither ended nor closed")
        # SETTINGS_MAX_CONCURRENT_STREAMS (100): a hundred streams held open at once are all answered once
        # ended; the 101st is a connection error for NIO (RFC 9113 §5.1.2 allows it): GOAWAY, then close.
        full = Connection(server.port, ca_file)
        ids = list(range(1, 201, 2))
        for stream in ids:
            full.frame(full.request(stream, "GET", "/people", end_stream=False))
        for stream in ids:
            full.frame(DataFrame(stream, data=b"", flags=["END_STREAM"]))
        outcomes = full.outcomes(ids, timeout=10)
        answered = sum(1 for r in outcomes.values() if r[0] == "answer" and r[1] == 200)
        over = Connection(server.port, ca_file)
        for stream in range(1, 203, 2):
            over.frame(over.request(stream, "GET", "/people", end_stream=False))
        ended_over, closed_over = over.until_ended(10, stop_at_goaway=False)
        over.close()
        full.close()
        if answered != 100:
            failures.append(f"100 streams at once: {answered} answered")
        if not (ended_over or "").startswith("GOAWAY") or not closed_over:
            failures.append(f"the 101st stream: {ended_over}, closed {closed_over}")
        # PING flood without reading the acknowledgements.
        pings = Connection(server.port, ca_file)
        ping = PingFrame(0, opaque_data=b"12345678").serialize()
        for _ in range(20):
            pings.send(ping * 5000)
        pings.close()
        status, _, _ = request_over_h2(server.port, ca_file)
        if status != 200:
            failures.append(f"after the floods: {status}")
        rss_after = server.rss_kib()
        cpu = server.cpu_seconds() - cpu_before
        ok = not failures and server.alive() and rss_after < rss_before + 64 * 1024
        checks.record(f"HTTP/2 floods: {resets} rapid resets, 101 streams, 100,000 PINGs", store, ok,
                      (f"rapid reset ended by {ended}; 100 streams at once: {answered} answered, the 101st "
                       f"ended by {ended_over}; "
                       f"server CPU {cpu:.1f} s, RSS {rss_before // 1024}→{rss_after // 1024} MiB")
                      + ("; " + "; ".join(failures) if failures else ""))
    finally:
        server.stop()


def check_hostile_backend(checks, server_class, binary, directory, ca_file):
    """reliability_backend's broken answers as streams of one HTTP/2 connection to `hammock serve --proxy`:
    each stream a 502 problem+json, a faithful reading, or (a body cut short) a reset; no hidden answer's
    bytes on any; and the connection still answers the backend's good answer afterwards."""
    import reliability_backend as hostile
    backend = hostile.Backend()
    server = server_class(binary, directory, "memory", extra=("--proxy", f"http://127.0.0.1:{backend.port}"))
    failures, outcomes = [], {}
    try:
        connection = Connection(server.port, ca_file)
        try:
            streams = {}
            for index, path in enumerate(hostile.ANSWERS):
                streams[1 + 2 * index] = path
                method = "HEAD" if path in hostile.HEADS else "GET"
                connection.frame(connection.request(1 + 2 * index, method, path))
            results = connection.outcomes(list(streams), timeout=20)
            for stream, path in streams.items():
                result = results[stream]
                if result[0] == "reset":
                    outcomes[path] = f"reset {result[1]}"
                    if path not in hostile.CUT:
                        failures.append(f"{path}: reset ({result[1]})")
                    continue
                if result[0] != "answer":
                    outcomes[path] = result[0]
                    failures.append(f"{path}: {result[0]}")
                    continue
                _, status, fields, body = result
                outcomes[path] = status
                if b"smuggled" in body or "set-cookie" in fields:
                    failures.append(f"{path}: a hidden answer's bytes or fields reached the client")
                problem = status == 502 and fields.get("content-type") == "application/problem+json"
                if not problem and hostile.FAITHFUL.get(path) != (status, body):
                    failures.append(f"{path}: {status} {body[:60]!r}")
            good_stream = 1 + 2 * len(streams)
            connection.frame(connection.request(good_stream, "GET", "/good"))
            good = connection.outcomes([good_stream])[good_stream]
            if good[:2] != ("answer", 200) or good[3] != b"good":
                failures.append(f"then /good on the same connection: {good[:2]}")
            # An upload over the body limit (streamed to the backend) that stops within its first window:
            # 408 on its stream at the request timeout, the connection's other streams untouched.
            upload = good_stream + 2
            connection.frame(connection.request(upload, "POST", "/upload", end_stream=False,
                                                extra=[("content-length", "5000000")]))
            for _ in range(3):  # within the first window (65,535) and the largest frame (16,384)
                connection.frame(DataFrame(upload, data=b"u" * 16000))
            stalled = connection.outcomes([upload], timeout=15)[upload]
            outcomes["/stalled-upload"] = stalled[1] if stalled[0] == "answer" else stalled[0]
            if stalled[:2] != ("answer", 408):
                failures.append(f"a stalled upload: {stalled[:2]}")
        finally:
            connection.close()
        if not server.alive():
            failures.append("the mock stopped")
        statuses = ", ".join(f"{path[1:]} {status}" for path, status in outcomes.items())
        checks.record(f"a hostile backend behind --proxy, {len(hostile.ANSWERS)} streams on one connection", "memory",
                      not failures, f"{len(failures)} failures: {'; '.join(failures[:4])}" if failures else statuses)
    finally:
        server.stop()
        backend.stop()


def request_over_h2(port, ca_file, path="/people"):
    connection = Connection(port, ca_file)
    try:
        connection.frame(connection.request(1, "GET", path))
        outcome = connection.outcomes([1], timeout=10)[1]
        return (outcome[1], outcome[2], outcome[3]) if outcome[0] == "answer" else (outcome, None, None)
    finally:
        connection.close()


def run(checks, server_class, binary, directory, ca_file, snapshot, quick, wanted):
    if wanted("bad-input"):
        for store in ("memory", f"sqlite:{directory}/h2-corpus.sqlite"):
            check_hostile_frames(checks, server_class, binary, directory, store, ca_file, snapshot)
            checks.rows[-1] = (checks.rows[-1][0], store.split(":")[0], *checks.rows[-1][2:])
        check_stream_errors(checks, server_class, binary, directory, "memory", ca_file)
    if wanted("slowloris"):
        check_slow_clients(checks, server_class, binary, directory, "memory", ca_file,
                           streams=50 if quick else 99, silent=20 if quick else 100)
    if wanted("flood"):
        check_floods(checks, server_class, binary, directory, "memory", ca_file, resets=5000 if quick else 50000)
    if wanted("backend"):
        check_hostile_backend(checks, server_class, binary, directory, ca_file)

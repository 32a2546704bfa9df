"""A backend that breaks HTTP/1.1 the ways a proxy meets, behind `hammock serve --proxy`.

Each path of the backend answers one way a server no one here wrote can go wrong: a status line that is
not one, framing that smuggles a second answer in the first (both `Content-Length` and `Transfer-Encoding`,
two lengths, more bytes than the length said), a body cut short, a chunk size that is not a number, a
header section past any limit, a carriage return inside a field value, an upgrade no one asked for, an
answer that never ends. What the mock's client must see: one answer per request, each a 502 problem+json
or a faithful reading of the backend's first answer, never a second answer's bytes or a field the bytes
hid; the proxy's kept connections to the backend never poisoned (the next request is the backend's
answer to it); and memory and descriptors back where they were.
"""

import base64
import hashlib
import os
import socket
import threading
import time

GOOD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\ngood"
SMUGGLED = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nSet-Cookie: smuggled=1\r\nContent-Length: 8\r\n\r\nsmuggled"

# What each path answers, and whether the backend then closes the connection.
ANSWERS = {
    "/garbage-status": (b"HTX/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok", True),
    "/empty-status": (b"\r\n\r\n", True),
    "/length-and-chunked": (b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n"
                            b"0\r\n\r\n" + SMUGGLED, False),
    "/two-lengths": (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 100\r\n\r\nok" + SMUGGLED, False),
    "/longer-than-said": (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok" + SMUGGLED,
                          False),
    "/shorter-than-said": (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", True),
    "/shorter-than-said-large": (b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + b"s" * 100_000, True),
    "/bad-chunk-size": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", True),
    "/chunked-cut": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", True),
    "/header-flood": (b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(20_000))
                      + b"Content-Length: 2\r\n\r\nok", True),
    "/megabyte-header": (b"HTTP/1.1 200 OK\r\nX-Big: " + b"b" * (1 << 20) + b"\r\nContent-Length: 2\r\n\r\nok", True),
    "/carriage-return-in-value": (b"HTTP/1.1 200 OK\r\nX-Evil: a\rSet-Cookie: smuggled=1\r\nContent-Length: 2\r\n\r\nok",
                                  True),
    "/nul-in-value": (b"HTTP/1.1 200 OK\r\nX-Evil: a\x00b\r\nContent-Length: 2\r\n\r\nok", True),
    "/early-hints": (b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
                     b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok", False),
    "/unasked-upgrade": (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: evil\r\nConnection: Upgrade\r\n\r\n"
                         + SMUGGLED, True),
    "/no-answer": (b"", True),
    # Asked with HEAD: a body after the head, where none may follow, on a connection kept open.
    "/head-with-body": (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\n\r\nsmuggled", False),
    "/http-0.9": (b"ok\n", True),
}

# WebSocket handshakes the backend answers wrongly, or frames it sends that break RFC 6455 after a right
# one (`None`: the handshake is answered right, with Sec-WebSocket-Accept computed from the key).
WEBSOCKETS = {
    "/ws/wrong-accept": (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         b"Sec-WebSocket-Accept: d3Jvbmc=\r\n\r\n", b""),
    "/ws/no-upgrade-field": (b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n", b""),
    # A server's frames are never masked (RFC 6455 §5.1): the client must fail the connection.
    "/ws/masked": (None, bytes([0x81, 0x88]) + b"\x00\x00\x00\x00" + b"smuggled"),
    "/ws/length-2^63": (None, bytes([0x82, 0x7F]) + (1 << 63).to_bytes(8, "big")),
    "/ws/reserved-opcode": (None, bytes([0x83, 0x08]) + b"smuggled"),
    "/ws/garbage": (None, bytes(range(7, 7 + 64 * 3, 3))),
    "/ws/text-not-utf8": (None, bytes([0x81, 0x02, 0xC3, 0x28])),
}
WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

# Of these, what the client may get besides a 502 problem+json: a faithful reading of the first answer.
FAITHFUL = {
    "/longer-than-said": (200, b"ok"),
    "/early-hints": (200, b"ok"),
    "/nul-in-value": (200, b"ok"),
    "/head-with-body": (200, b""),
}
# Asked with HEAD instead of GET.
HEADS = {"/head-with-body"}
# A body cut short and too large to hold: the client's answer may start (200) but must end cut, never whole.
CUT = {"/shorter-than-said-large", "/chunked-cut", "/bad-chunk-size"}


class Backend:
    """The backend on a free port of the loopback, a thread per connection."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stopped = False
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock):
        sock.settimeout(30)
        data = b""
        try:
            while True:
                while b"\r\n\r\n" not in data:
                    chunk = sock.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, data = data.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1].split("?")[0]
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                while len(data) < length:
                    chunk = sock.recv(65536)
                    if not chunk:
                        return  # the proxy cut the request's body
                    data += chunk
                data = data[length:]
                if path in WEBSOCKETS:
                    handshake, frames = WEBSOCKETS[path]
                    if handshake is None:
                        key = next(line.partition(":")[2].strip() for line in lines[1:]
                                   if line.lower().startswith("sec-websocket-key:"))
                        accept = base64.b64encode(hashlib.sha1(key.encode() + WEBSOCKET_GUID).digest())
                        handshake = (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                     b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")
                    sock.sendall(handshake + frames)
                    while sock.recv(65536):  # until the proxy closes its side
                        pass
                    return
                if path == "/endless":
                    sock.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                    chunk = b"%x\r\n" % 65536 + b"e" * 65536 + b"\r\n"
                    while not self.stopped:
                        sock.sendall(chunk)
                    return
                answer, closes = ANSWERS.get(path, (GOOD, False))
                sock.sendall(answer)
                if closes:
                    return
        except (OSError, ValueError, IndexError, StopIteration):
            return
        finally:
            sock.close()

    def stop(self):
        self.stopped = True
        self.listener.close()


def read_until(sock, done):
    """Reads until `done(received)` holds, the server closes or resets, or the socket's timeout passes with
    nothing: what arrived, and whether the connection ended (a close or a reset, not the timeout)."""
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return received, False
        except OSError:
            return received, True
        if not chunk:
            return received, True
        received += chunk
        if done(received):
            return received, False


def exchange(open_connection, port, path, read_limit=None, timeout=15, method="GET"):
    """One request through the mock on a connection of its own; the raw answer and whether it ended by the
    server closing (not by the length or the last chunk the head promised, or the head of a HEAD's)."""
    sock = open_connection(port, timeout=timeout)
    try:
        sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        if method == "HEAD":
            received, ended = read_until(sock, lambda data: b"\r\n\r\n" in data)
            if not ended:
                # What follows the head would be the bytes the backend hid: wait briefly for them.
                sock.settimeout(0.5)
                received += read_until(sock, lambda data: False)[0]
            return received, ended
        return read_until(sock, lambda data: (read_limit is not None and len(data) >= read_limit)
                          or answer_end(data) is not None)
    finally:
        sock.close()


def websocket_exchange(open_connection, port, path, timeout=10):
    """A WebSocket handshake through the mock, then reading until the connection ends or falls silent for
    `timeout`: what arrived, and whether the connection ended."""

    def done(data):
        if not data.startswith(b"HTTP/1.1 101"):
            return answer_end(data) is not None
        return b"\r\n\r\n" in data and close_frame_code(data.split(b"\r\n\r\n", 1)[1]) is not None

    sock = open_connection(port, timeout=timeout)
    try:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        return read_until(sock, done)
    finally:
        sock.close()


def close_frame_code(data):
    """The code of the first close frame in a server's frames, or None if there is none (yet)."""
    while len(data) >= 2:
        length, at = data[1] & 0x7F, 2
        if length == 126:
            length, at = int.from_bytes(data[2:4], "big"), 4
        elif length == 127:
            length, at = int.from_bytes(data[2:10], "big"), 10
        if len(data) < at + length:
            return None
        if data[0] & 0x0F == 8:
            return int.from_bytes(data[at:at + 2], "big") if length >= 2 else 1005
        data = data[at + length:]
    return None


def answer_end(data):
    """Where the one answer in `data` ends, or None while it is incomplete."""
    if b"\r\n\r\n" not in data:
        return None
    head, body = data.split(b"\r\n\r\n", 1)
    fields = {}
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    if "content-length" in fields:
        length = int(fields["content-length"])
        return len(head) + 4 + length if len(body) >= length else None
    if fields.get("transfer-encoding") == "chunked":
        at = 0
        while True:
            line_end = body.find(b"\r\n", at)
            if line_end < 0:
                return None
            size = int(body[at:line_end].split(b";")[0], 16)
            if size == 0:
                trailer_end = body.find(b"\r\n\r\n", line_end)
                return None if trailer_end < 0 else len(head) + 4 + trailer_end + 4
            at = line_end + 2 + size + 2
            if at > len(body):
                return None
    return None


def parse(data):
    """Status, fields (lower-cased names, the last of each) and body of one answer."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return status, fields, body


def run(checks, server_class, binary, directory, open_connection, request):
    """The check: every answer of ANSWERS through the mock, the backend's good answer after each, the
    endless answer read in part and not at all."""
    backend = Backend()
    recording = os.path.join(directory, "hostile-recording.json")
    server = server_class(binary, directory, "memory",
                          extra=("--proxy", f"http://127.0.0.1:{backend.port}", "--record", recording))
    failures, outcomes = [], {}
    try:
        for _ in range(3):  # the proxy's connections to the backend made, and the allocator warm
            request(server.port, "GET", "/good")
        baseline_descriptors = server.descriptors()
        for path in ANSWERS:
            data, closed = exchange(open_connection, server.port, path, method="HEAD" if path in HEADS else "GET")
            if b"smuggled" in data:
                failures.append(f"{path}: the client got the second answer's bytes")
            try:
                status, fields, body = parse(data)
            except (ValueError, IndexError):
                failures.append(f"{path}: no answer the client can read: {data[:80]!r}")
                continue
            outcomes[path] = status
            problem = status == 502 and fields.get("content-type") == "application/problem+json"
            if path in CUT:
                if status == 502:
                    failures.extend([] if problem else [f"{path}: a 502 that is not problem+json"])
                elif status != 200 or not closed or answer_end(data) is not None:
                    failures.append(f"{path}: a body cut short was passed on as {status}, "
                                    f"{'ended by a close' if closed else 'whole'}")
            elif not problem and FAITHFUL.get(path) != (status, body):
                failures.append(f"{path}: {status} {body[:60]!r}")
            if path in FAITHFUL and status == 200 and "set-cookie" in fields:
                failures.append(f"{path}: a field the bytes hid reached the client")
            for _ in range(2):
                good = request(server.port, "GET", "/good")
                if good[0] != 200 or good[2] != b"good":
                    failures.append(f"after {path}: the next request got {good[0]} {good[2][:40]!r}")
                    break

        # WebSocket handshakes answered wrongly, and frames that break the protocol after a right one: the
        # handshake refused with a 502, or the socket closed with a code (or cut); never the bytes passed on.
        for path in WEBSOCKETS:
            data, ended = websocket_exchange(open_connection, server.port, path)
            if b"smuggled" in data:
                failures.append(f"{path}: the client got a broken frame's payload")
            head = data.split(b"\r\n", 1)[0]
            if head.startswith(b"HTTP/1.1 101"):
                code = close_frame_code(data.split(b"\r\n\r\n", 1)[1])
                outcomes[path] = f"101, closed {code}" if code else f"101, {'cut' if ended else 'left open'}"
                if code not in (1002, 1007, 1009):
                    failures.append(f"{path}: the client's socket was {outcomes[path][5:]}, not closed for the "
                                    "broken protocol")
            else:
                status, fields, _ = parse(data) if head else (0, {}, b"")
                outcomes[path] = status
                if status != 502 or fields.get("content-type") != "application/problem+json":
                    failures.append(f"{path}: the handshake got {head[:40]!r}")
            good = request(server.port, "GET", "/good")
            if good[0] != 200 or good[2] != b"good":
                failures.append(f"after {path}: the next request got {good[0]} {good[2][:40]!r}")

        # A client whose upload (over the body limit: streamed to the backend) stops half way, the connection
        # left open: 408 at the request timeout, as problem+json, and the connection closed.
        stalled = open_connection(server.port, timeout=30)
        try:
            stalled.sendall(b"POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5000000\r\n\r\n" + b"u" * 1500000)
            began, data = time.time(), b""
            while True:
                chunk = stalled.recv(65536)
                if not chunk:
                    break
                data += chunk
            waited = time.time() - began
        except OSError as error:
            data, waited = str(error).encode(), time.time() - began
        finally:
            stalled.close()
        outcomes["/stalled-upload"] = f"{data[:12].decode(errors='replace')} after {waited:.0f} s"
        if not data.startswith(b"HTTP/1.1 408") or b"application/problem+json" not in data:
            failures.append(f"a stalled upload got {data[:60]!r} after {waited:.0f} s")

        # An answer that never ends: a client that reads 4 MiB of it and leaves, and one that reads none.
        data, _ = exchange(open_connection, server.port, "/endless", read_limit=4 << 20)
        if not data.startswith(b"HTTP/1.1 200"):
            failures.append(f"/endless: {data[:60]!r}")
        baseline_memory = server.rss_kib()  # after the cases above, which left the allocator larger
        silent = open_connection(server.port, timeout=10)
        silent.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        silent.sendall(b"GET /endless HTTP/1.1\r\nHost: localhost\r\n\r\n")
        peak = baseline_memory
        for _ in range(20):
            time.sleep(0.1)
            peak = max(peak, server.rss_kib())
        silent.close()
        growth = (peak - baseline_memory) / 1024
        if growth >= 16:
            failures.append(f"an unread endless answer grew the mock by {growth:.1f} MiB")

        # Every connection of the cases is closed on both sides within a few seconds.
        descriptors = server.descriptors()
        for _ in range(50):
            descriptors = server.descriptors()
            if descriptors <= baseline_descriptors + 1:
                break
            time.sleep(0.1)
        if descriptors > baseline_descriptors + 1:
            failures.append(f"descriptors {baseline_descriptors} before, {descriptors} after")
        alive = server.alive() and request(server.port, "GET", "/good")[2] == b"good"
        if not alive:
            failures.append("the mock stopped answering")

        # What was recorded meanwhile: none of the hidden answers' bytes, and it serves the good answer.
        server.stop()
        with open(recording, "rb") as file:
            recorded = file.read()
        if b"smuggled" in recorded:
            failures.append("the recording holds a hidden answer's bytes")
        replay = server_class(binary, directory, "memory", config=recording)
        try:
            replayed = request(replay.port, "GET", "/good")
            if replayed[:1] != (200,) or replayed[2] != b"good":
                failures.append(f"the recording replays /good as {replayed[0]} {replayed[2][:40]!r}")
        finally:
            replay.stop()
        statuses = ", ".join(f"{path[1:]} {status}" for path, status in outcomes.items())
        checks.record("a hostile backend behind --proxy", "memory", not failures,
                      (f"{len(failures)} failures: {'; '.join(failures[:4])}" if failures else
                       f"{len(ANSWERS)} answers and {len(WEBSOCKETS)} WebSockets: {statuses}; "
                       f"unread endless answer +{growth:.1f} MiB; "
                       f"descriptors {baseline_descriptors}→{descriptors}"))
    finally:
        server.stop()
        backend.stop()

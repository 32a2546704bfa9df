"""A WebSocket backend no one here wrote (the `websockets` library from PyPI), for the proxy's tests: the
mock forwards its clients' handshakes here. Prints `Listening at: http://127.0.0.1:PORT` on stderr once it
listens (as gunicorn does, so the tests read the port the same way), and serves until killed.

Paths:
  /echo     every message back as it came (text or bytes)
  /hello    first a JSON report of the handshake it got (path, query, fields, subprotocol), then an echo
  /close    closes with 4001 "bye from backend" on the first message
  /drop     cuts the connection without a close frame on the first message
  /push     sends "1" to "5", then echoes
  /quiet    pings five times, each waiting up to 120 s for its pong (else it closes with 1011), then says
            "still here after 5 pongs"
  /badtext  a text frame whose bytes are not UTF-8 (Latin-1 "café"), then an echo
  /long     one text message of 300,000 characters, sent in 300 fragments
  /closes   a JSON list of how each earlier socket ended: the close code the client sent, or 1006
  /refuse   refused with 403, a body and X-Reason, before any upgrade
  /both     a plain GET (no Upgrade) answers 200 with JSON; a WebSocket is an echo
usage: websocket_backend.py [CERTIFICATE_FILE KEY_FILE]   (with them, wss:// and `https://` in the line)
"""
import asyncio
import json
import ssl
import sys
from http import HTTPStatus

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

ended = []


def process_request(connection, request):
    if request.path.startswith("/refuse"):
        response = connection.respond(HTTPStatus.FORBIDDEN, "no socket for you\n")
        response.headers["X-Reason"] = "refused by the backend"
        return response
    if request.path.startswith("/both") and request.headers.get("Upgrade") is None:
        response = connection.respond(HTTPStatus.OK, '{"plain": true}')
        response.headers["Content-Type"] = "application/json"
        return response
    return None


def select_subprotocol(connection, offered):
    # chat.v2 if offered, else chat.v1; a client offering neither connects without one.
    return next((name for name in ["chat.v2", "chat.v1"] if name in offered), None)


async def handler(connection):
    path = connection.request.path.split("?", 1)[0]
    try:
        if path == "/hello":
            headers = connection.request.headers
            report = {
                "path": path,
                "target": connection.request.path,
                "subprotocol": connection.subprotocol,
                "fields": {name: headers.get(name) for name in [
                    "Host", "Authorization", "Cookie", "Origin", "Via", "Forwarded", "X-Custom",
                    "Sec-WebSocket-Extensions", "Sec-WebSocket-Protocol", "Keep-Alive", "X-Hop"]},
            }
            await connection.send(json.dumps(report))
        elif path == "/close":
            await connection.recv()
            await connection.close(4001, "bye from backend")
            return
        elif path == "/drop":
            await connection.recv()
            connection.transport.abort()
            return
        elif path == "/push":
            for number in range(1, 6):
                await connection.send(str(number))
        elif path == "/quiet":
            # Five pings 0.2 s apart, each answered or the socket is closed with 1011. Here, not through the
            # library's keepalive for every socket: a pong late under a loaded test run would close them all.
            for _ in range(5):
                await asyncio.sleep(0.2)
                try:
                    # 120 s, not 10: a full test run's load kept the relay from its turn for over 10 s (a CI run's
                    # 1011). Unanswered pings still close the socket, only later.
                    await asyncio.wait_for(await connection.ping(), timeout=120)
                except asyncio.TimeoutError:
                    await connection.close(1011, "no pong")
                    return
            await connection.send("still here after 5 pongs")
        elif path == "/badtext":
            # A text frame that is not UTF-8, below the library's checks of what it sends.
            connection.protocol.send_text(b"caf\xe9")
            connection.send_data()
        elif path == "/long":
            await connection.send(["x" * 1000 for _ in range(300)])
        elif path == "/closes":
            await connection.send(json.dumps(ended))
        async for message in connection:
            await connection.send(message)
    except ConnectionClosed:
        pass
    finally:
        if path != "/closes":
            await connection.wait_closed()
            received = connection.protocol.close_rcvd
            ended.append({"path": path, "code": received.code if received else 1006,
                          "reason": received.reason if received else ""})


async def main():
    context = None
    if len(sys.argv) > 2:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
    async with serve(handler, "127.0.0.1", 0, process_request=process_request, select_subprotocol=select_subprotocol,
                     ping_interval=None, max_size=1 << 20, ssl=context) as server:
        port = server.sockets[0].getsockname()[1]
        scheme = "https" if context else "http"
        print(f"Listening at: {scheme}://127.0.0.1:{port}", file=sys.stderr, flush=True)
        await asyncio.Future()


asyncio.run(main())

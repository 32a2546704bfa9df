"""Meets WebSockets proxied by `hammock serve --proxy` with the `websockets` library (PyPI), a client no one
here wrote, while the backend behind the mock is the same library (websocket_backend.py). Prints one JSON
object per check; ProxyCommandTests reads them.

usage: websocket_proxy_client.py BASE_URL [CA_FILE]   (BASE_URL is http://HOST:PORT or https://HOST:PORT)
"""
import json
import socket
import time

from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from websocket_target import context, report, socket_base


def ending(path):
    """How the backend saw the latest socket on `path` end, asked through the mock."""
    for _ in range(100):
        with connect(socket_base + "/closes", ssl=context, open_timeout=30) as closes:
            seen = [end for end in json.loads(closes.recv(timeout=30)) if end["path"] == path]
        if seen:
            return seen[-1]
        time.sleep(0.05)
    return None


# Echo, text and bytes; the client's close code reaches the backend.
with connect(socket_base + "/echo", ssl=context, open_timeout=30) as echo:
    echo.send("hello")
    text = echo.recv(timeout=30)
    echo.send(b"\x00\x01\xff")
    data = echo.recv(timeout=30)
    echo.close(code=4000, reason="done")
report("echo", text=text, bytes=list(data), backend=ending("/echo"))

# A client that vanishes without a close frame: the backend is told the client went away (1001).
vanishing = connect(socket_base + "/push", ssl=context, open_timeout=30)
vanishing.recv(timeout=30)
vanishing.socket.shutdown(socket.SHUT_RDWR)
vanishing.socket.close()
report("vanish", backend=ending("/push"))

# The handshake as the backend saw it, and the subprotocol it chose.
with connect(socket_base + "/hello?room=7", ssl=context, subprotocols=["chat.v1", "chat.v2"],
             additional_headers={"Authorization": "Bearer t-1"}, open_timeout=30) as hello:
    seen = json.loads(hello.recv(timeout=30))
    report("hello", subprotocol=hello.subprotocol, target=seen["target"], fields=seen["fields"])

# The backend's close, with its code and reason.
with connect(socket_base + "/close", ssl=context, open_timeout=30) as closing:
    closing.send("x")
    try:
        closing.recv(timeout=30)
        report("close", close=None)
    except ConnectionClosed as closed:
        report("close", close=closed.rcvd.code if closed.rcvd else None,
               reason=closed.rcvd.reason if closed.rcvd else None)

# A message in 300 fragments arrives whole.
with connect(socket_base + "/long", ssl=context, open_timeout=30) as long:
    report("long", length=len(long.recv(timeout=30)))

# A refusal is the backend's.
try:
    connect(socket_base + "/refuse", ssl=context, open_timeout=30)
    report("refuse", status=101)
except InvalidStatus as refused:
    response = refused.response
    report("refuse", status=response.status_code, body=bytes(response.body).decode(),
           reason=response.headers.get("X-Reason"))

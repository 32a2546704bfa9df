"""Meets `hammock serve`'s WebSocket routes with the `websockets` library (PyPI), a client no one here
wrote: echo, scripted messages, a live feed, a fault; over ws:// or wss:// (with the given CA file).
Prints one JSON object per check; WebSocketCommandTests reads them.

usage: websocket_client.py BASE_URL [CA_FILE]   (BASE_URL is http://HOST:PORT or https://HOST:PORT)
"""
import json
import urllib.request

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from websocket_target import base, context, report, socket_base


# Echo: text and bytes back as sent; the client's close code comes back.
with connect(socket_base + "/ws/echo", ssl=context, open_timeout=30) as echo:
    echo.send("hello")
    text = echo.recv(timeout=30)
    echo.send(b"\x00\x01\xff")
    data = echo.recv(timeout=30)
    echo.close(code=4000, reason="done")
    report("echo", text=text, bytes=list(data), close=echo.close_code)

# Scripted: the messages in order, then the script's close.
with connect(socket_base + "/ws/greet?name=Ada", ssl=context, open_timeout=30) as greet:
    messages = []
    try:
        while True:
            messages.append(greet.recv(timeout=30))
    except ConnectionClosed as closed:
        report("script", messages=messages, close=closed.rcvd.code if closed.rcvd else None,
               reason=closed.rcvd.reason if closed.rcvd else None)

# A live feed, with its subprotocol: a record created over HTTP arrives as a message.
with connect(socket_base + "/ws/people", ssl=context, subprotocols=["hammock.v1"], open_timeout=30) as feed:
    request = urllib.request.Request(base + "/people", data=json.dumps({"name": "Grace"}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, context=context, timeout=30) as answer:
        status = answer.status
    change = json.loads(feed.recv(timeout=30))
    report("feed", subprotocol=feed.subprotocol, status=status, change=change)

# A fault: two echoes, then 1011.
with connect(socket_base + "/ws/faulty", ssl=context, open_timeout=30) as faulty:
    echoed = []
    for word in ["a", "b", "c"]:
        try:
            faulty.send(word)
        except ConnectionClosed:
            break
    try:
        while True:
            echoed.append(faulty.recv(timeout=30))
    except ConnectionClosed as closed:
        report("fault", echoed=echoed, close=closed.rcvd.code if closed.rcvd else None)

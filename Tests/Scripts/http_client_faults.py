#!/usr/bin/env python3
"""Meets each of Hammock's connection faults with Python's http.client, a client no one here wrote.

Usage: http_client_faults.py PORT PATH...
Prints one JSON object per path: the exception's class (or null), the status and body size when an
answer arrived, and the seconds from sending the request to the end of the body.
"""
import http.client
import json
import socket
import sys
import time


def probe(port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    started = time.monotonic()
    result = {"path": path, "error": None, "status": None, "bytes": None}
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        result["status"] = response.status
        body = response.read()
        result["bytes"] = len(body)
    except (socket.timeout, TimeoutError) as error:
        result["error"] = "TimeoutError"
    except Exception as error:  # the class is the point: RemoteDisconnected, IncompleteRead, ...
        result["error"] = type(error).__name__
    finally:
        connection.close()
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


def main():
    port = int(sys.argv[1])
    for path in sys.argv[2:]:
        print(json.dumps(probe(port, path)), flush=True)


if __name__ == "__main__":
    main()

"""What the WebSocket client scripts share: the mock's address from the command line (BASE_URL, then an
optional CA_FILE to trust for https), the same address as ws:// or wss://, and one JSON line per check."""
import json
import ssl
import sys

base = sys.argv[1]
ca = sys.argv[2] if len(sys.argv) > 2 else None
context = ssl.create_default_context(cafile=ca) if ca else None
socket_base = ("wss://" if base.startswith("https://") else "ws://") + base.split("://", 1)[1]


def report(check, **values):
    print(json.dumps({"check": check, **values}), flush=True)

"""demo-service: answers health checks."""

import json
from http.server import BaseHTTPRequestHandler, HTTPServer


def load_config(path="config.json"):
    with open(path) as f:
        return json.load(f)


class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok\n")


if __name__ == "__main__":
    cfg = load_config()
    host, port = cfg["listen"].split(":")
    HTTPServer((host, int(port)), Health).serve_forever()

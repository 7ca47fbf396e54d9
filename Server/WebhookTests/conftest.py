"""Fixtures for the webhook tests: a real `vane serve` (SQLite) that may call receivers on
loopback, and receivers that verify every delivery with the Standard Webhooks reference
verifier (PyPI `standardwebhooks`)."""

import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "PythonSupport"))
from vane_server import free_port, start_server, stop_server  # noqa: E402


@pytest.fixture(scope="session")
def server():
    # Receivers listen on loopback, which the server refuses unless told; failed deliveries are
    # retried after 0.2 s, doubling, so "an endpoint down for a while" takes seconds.
    running = start_server(["--webhooks-allow-private-addresses", "--webhook-retry", "0.2"])
    yield running
    stop_server(running)


class Receiver:
    """An HTTP endpoint on loopback that records every request: its headers and raw body."""

    def __init__(self, port=None):
        self.port = port or free_port()
        self.requests = []
        self.lock = threading.Lock()
        self.httpd = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with receiver.lock:
                    receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()

    def received(self):
        with self.lock:
            return list(self.requests)

    def payloads(self):
        return [json.loads(body) for _, body in self.received()]


@pytest.fixture
def receiver():
    running = Receiver().start()
    yield running
    running.stop()

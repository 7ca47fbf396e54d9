"""Fixtures for the interoperability tests: a real `vane serve` (SQLite) that other projects'
official clients talk to over loopback."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Server:
    """A running `vane serve` and the keys its first start made."""

    url: str
    data: Path
    process: subprocess.Popen
    admin_key: str
    client_key: str

    def api(self, method: str, path: str, body=None, key=None, headers=None):
        """Calls the JSON API; returns (status, parsed body or text, headers)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", "Bearer " + (key or self.admin_key))
        request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                text = response.read().decode()
                return response.status, (json.loads(text) if text else None), response.headers
        except urllib.error.HTTPError as error:
            text = error.read().decode()
            try:
                return error.code, json.loads(text), error.headers
            except ValueError:
                return error.code, text, error.headers

    def publish(self, template: dict, environment: str = "production"):
        """Publishes a template to the demo project, replacing whatever is live."""
        status, body, _ = self.api(
            "PUT",
            f"/v1/projects/demo/environments/{environment}/template",
            template,
            headers={"If-Match": "*"},
        )
        assert status == 200, body


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(extra=()) -> Server:
    binary = os.environ.get("VANE_BIN", "vane")
    data = Path(tempfile.mkdtemp(prefix="vane-interop-")) / "data"
    port = free_port()
    log = open(data.parent / "stdout", "w")
    process = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--data-dir", str(data), *extra],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    banner = ""
    for _ in range(600):
        banner = (data.parent / "stdout").read_text()
        if "Client key" in banner:
            break
        if process.poll() is not None:
            raise RuntimeError("vane serve exited:\n" + banner)
        time.sleep(0.1)
    match = re.search(r"Vane is serving at (\S+)", banner)
    if match is None:
        process.kill()
        raise RuntimeError("vane serve printed no address in 60 s:\n" + banner)
    client_key = re.search(r"(vane_client_\S+)", banner).group(1)
    admin_key = (data / "admin-key").read_text().strip()
    return Server(match.group(1), data, process, admin_key, client_key)


@pytest.fixture(scope="session")
def server():
    # One test process evaluates many flags per second from one address with one context: the
    # per-client limit (10/s) is for apps, so these tests turn the limits off.
    running = start_server(["--rate-limit", "0", "--address-rate-limit", "0", "--key-rate-limit", "0"])
    yield running
    running.process.send_signal(signal.SIGTERM)
    try:
        running.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        running.process.kill()
    shutil.rmtree(running.data.parent, ignore_errors=True)

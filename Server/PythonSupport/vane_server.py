"""A real `vane serve` for the Python test suites (Server/BrowserTests, Server/InteropTests):
started on a free loopback port with a data directory of its own, with what its first start
printed, and a small JSON API client."""

import json
import os
import re
import signal
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Server:
    """A running `vane serve` and what its first start printed."""

    url: str
    data: Path
    process: subprocess.Popen
    admin_key: str
    client_key: str
    first_password: str
    state: dict = field(default_factory=dict)

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

    def fetch(self, context: dict) -> dict:
        """What an app with the demo production client key receives for a context."""
        status, body, _ = self.api(
            "POST",
            "/v1/projects/demo/environments/production/fetch",
            {"context": context},
            key=self.client_key,
        )
        assert status == 200, body
        return body["entries"]


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


def start_server(extra=(), port=None) -> Server:
    """Starts `vane serve` with `extra` arguments, on `port` (default: a free one)."""
    binary = os.environ.get("VANE_BIN", "vane")
    data = Path(tempfile.mkdtemp(prefix="vane-pytest-")) / "data"
    port = port or free_port()
    log = open(data.parent / "stdout", "w")
    process = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--data-dir", str(data), *extra],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    banner = ""
    for _ in range(300):
        banner = (data.parent / "stdout").read_text()
        if "Client key" in banner:
            break
        if process.poll() is not None:
            raise RuntimeError("vane serve exited:\n" + banner)
        time.sleep(0.1)
    match = re.search(r"Vane is serving at (\S+)", banner)
    if match is None:
        process.kill()
        raise RuntimeError("vane serve printed no address in 30 s:\n" + banner)
    url = match.group(1)
    client_key = re.search(r"(vane_client_\S+)", banner).group(1)
    admin_key = (data / "admin-key").read_text().strip()
    password = re.search(r"password: (\S+)", (data / "console-admin-password").read_text()).group(1)
    return Server(url, data, process, admin_key, client_key, password)


def stop_server(running: Server):
    """Stops the server (SIGTERM, then SIGKILL after 20 s) and deletes its data directory."""
    running.process.send_signal(signal.SIGTERM)
    try:
        running.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        running.process.kill()
    shutil.rmtree(running.data.parent, ignore_errors=True)

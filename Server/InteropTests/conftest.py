"""Fixtures for the interoperability tests: a real `vane serve` (SQLite) that other projects'
official clients talk to over loopback."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "PythonSupport"))
from vane_server import start_server, stop_server  # noqa: E402


@pytest.fixture(scope="session")
def server():
    # One test process evaluates many flags per second from one address with one context: the
    # per-client limit (10/s) is for apps, so these tests turn the limits off.
    running = start_server(["--rate-limit", "0", "--address-rate-limit", "0", "--key-rate-limit", "0"])
    yield running
    stop_server(running)

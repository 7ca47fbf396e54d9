"""Soak test of a two-node Vane cluster on one PostgreSQL database (see ../soak.sh).

For the given minutes, against two real `vane serve` processes on a real PostgreSQL server:
  * a publisher publishes a new template every 250 ms, alternating nodes, and records every
    version that was acknowledged (200);
  * FETCHERS keep-alive clients fetch in a loop with a per-request context, half on each node;
  * SUBSCRIBERS open event streams and drop them abruptly (a reset) after a random time, then
    open new ones;
  * every KILL_EVERY seconds node B is killed with SIGKILL and started again on the same port.

Then it checks, and exits non-zero when one fails:
  * every acknowledged version is in the version history;
  * no client got a 5xx from node A (node B's may come from its own death, and are counted);
  * node A's resident memory after warm-up grew by at most 20 % over its warm-up level.
It prints one JSON line with the figures for docs/PERFORMANCE.md.
"""

import asyncio
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

ADMIN = "vane_admin_soak-" + os.urandom(16).hex()
FETCHERS = int(os.environ.get("SOAK_FETCHERS", "2000"))
SUBSCRIBERS = int(os.environ.get("SOAK_SUBSCRIBERS", "200"))
KILL_EVERY = float(os.environ.get("SOAK_KILL_EVERY", "60"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Node:
    def __init__(self, name, binary, database, port, data):
        self.name, self.binary, self.database, self.port, self.data = name, binary, database, port, data
        self.process = None
        self.alive = False
        self.deaths = 0

    def start(self):
        os.makedirs(self.data, exist_ok=True)
        log = open(os.path.join(self.data, "log"), "ab")
        self.process = subprocess.Popen(
            [self.binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--database", self.database,
             "--data-dir", self.data, "--admin-key", ADMIN, "--secret-file", SECRET_FILE,
             "--rate-limit", "0", "--address-rate-limit", "0", "--key-rate-limit", "0",
             "--max-streams-per-address", "100000", "--max-streams-per-key", "100000",
             "--max-connections", "16000", "--no-demo"],
            stdout=log, stderr=log, env={**os.environ, "VANE_LOG_LEVEL": "error"})
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if s.recv(100).startswith(b"HTTP/1.1 200"):
                        self.alive = True
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit(f"{self.name} did not become ready")

    def kill(self):
        self.alive = False
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.deaths += 1

    def rss_kib(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


async def request(reader, writer, method, path, body=b"", headers=()):
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers)
    writer.write(head.encode() + b"\r\n" + body)
    await writer.drain()
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("closed")
    status = int(status_line.split()[1])
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    data = await reader.readexactly(length) if length else b""
    return status, data


class Stats:
    def __init__(self):
        self.fetches = {"A": 0, "B": 0}
        self.server_errors = {"A": 0, "B": 0}
        self.connection_errors = {"A": 0, "B": 0}
        self.streams_opened = 0
        self.streams_dropped = 0
        self.acknowledged = []
        self.publish_failures = 0


async def one_shot(node, method, path, body=b"", headers=()):
    reader, writer = await asyncio.open_connection("127.0.0.1", node.port)
    try:
        return await request(reader, writer, method, path, body, headers)
    finally:
        writer.close()


async def publisher(nodes, stats, stop):
    index = 0
    while not stop.is_set():
        node = nodes[index % 2]
        index += 1
        template = {"parameters": {"kill_switch": {"defaultValue": {"value": str(index % 2 == 0).lower()}},
                                   "counter": {"defaultValue": {"value": str(index)}}}}
        try:
            status, data = await one_shot(node, "PUT", PATH + "/template", json.dumps(template).encode(),
                                          [("Authorization", f"Bearer {ADMIN}"), ("If-Match", "*"),
                                           ("Content-Type", "application/json")])
            if status == 200:
                stats.acknowledged.append(int(json.loads(data)["version"]["versionNumber"]))
            else:
                stats.publish_failures += 1
                if status >= 500 and node.name == "A":
                    stats.server_errors["A"] += 1
        except (OSError, ConnectionError, asyncio.IncompleteReadError):
            stats.publish_failures += 1
        await asyncio.sleep(0.25)


async def fetcher(number, node, key, stats, stop):
    body = json.dumps({"context": {"randomizationId": f"user-{number}"}}).encode()
    headers = [("Authorization", f"Bearer {key}"), ("Content-Type", "application/json")]
    etag = None
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", node.port)
        except OSError:
            stats.connection_errors[node.name] += 1
            await asyncio.sleep(1)
            continue
        try:
            while not stop.is_set():
                extra = [("If-None-Match", etag)] if etag else []
                status, data = await request(reader, writer, "POST", PATH + "/fetch", body, headers + extra)
                stats.fetches[node.name] += 1
                if status >= 500:
                    stats.server_errors[node.name] += 1
                if status == 200:
                    etag = None  # keep it simple: every other request is a full evaluation
                await asyncio.sleep(random.uniform(0.5, 2.0))
        except (OSError, ConnectionError, asyncio.IncompleteReadError):
            stats.connection_errors[node.name] += 1
        finally:
            writer.close()


async def subscriber(node, key, stats, stop):
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", node.port)
            writer.write(f"GET {PATH}/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
                         "Accept: text/event-stream\r\n\r\n".encode())
            await writer.drain()
            stats.streams_opened += 1
            try:
                await asyncio.wait_for(reader.read(1 << 16), timeout=random.uniform(0.5, 10))
                await asyncio.sleep(random.uniform(0, 5))
            except asyncio.TimeoutError:
                pass
            # An abrupt disconnect: RST instead of FIN.
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            stats.streams_dropped += 1
        except OSError:
            await asyncio.sleep(1)


async def killer(node, stop):
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), timeout=KILL_EVERY)
            return
        except asyncio.TimeoutError:
            pass
        node.kill()
        await asyncio.sleep(2)
        await asyncio.get_running_loop().run_in_executor(None, node.start)


async def sampler(node, samples, stop):
    while not stop.is_set():
        samples.append((time.time(), node.rss_kib()))
        try:
            await asyncio.wait_for(stop.wait(), timeout=10)
        except asyncio.TimeoutError:
            pass


async def main(minutes, binary, database_url):
    work = tempfile.mkdtemp(prefix="vane-soak-")
    global SECRET_FILE, PATH
    SECRET_FILE = os.path.join(work, "secret")
    with open(SECRET_FILE, "w") as f:
        f.write(os.urandom(32).hex())
    PATH = "/v1/projects/soak/environments/production"
    a = Node("A", binary, database_url, free_port(), os.path.join(work, "a"))
    b = Node("B", binary, database_url, free_port(), os.path.join(work, "b"))
    a.start()
    b.start()
    auth = [("Authorization", f"Bearer {ADMIN}"), ("Content-Type", "application/json")]
    status, _ = await one_shot(a, "POST", "/v1/projects", json.dumps({"id": "soak", "name": "Soak"}).encode(), auth)
    assert status == 201, status
    status, _ = await one_shot(a, "POST", "/v1/projects/soak/environments",
                               json.dumps({"id": "production"}).encode(), auth)
    assert status == 201, status
    status, data = await one_shot(a, "POST", "/v1/keys", json.dumps(
        {"name": "soak", "role": "client", "project": "soak", "environment": "production"}).encode(), auth)
    assert status == 201, status
    key = json.loads(data)["key"]

    stats, samples, stop = Stats(), [], asyncio.Event()
    tasks = [asyncio.create_task(publisher([a, b], stats, stop)),
             asyncio.create_task(killer(b, stop)),
             asyncio.create_task(sampler(a, samples, stop))]
    for n in range(FETCHERS):
        tasks.append(asyncio.create_task(fetcher(n, a if n % 2 == 0 else b, key, stats, stop)))
        if n % 200 == 0:
            await asyncio.sleep(0.05)
    for n in range(SUBSCRIBERS):
        tasks.append(asyncio.create_task(subscriber(a if n % 2 == 0 else b, key, stats, stop)))
    started = time.time()
    await asyncio.sleep(minutes * 60)
    stop.set()
    await asyncio.wait(tasks, timeout=30)
    for task in tasks:
        task.cancel()

    # Every acknowledged version is in the history (node A, all pages).
    present, token = set(), None
    while True:
        path = PATH + "/versions?pageSize=300" + (f"&pageToken={token}" if token else "")
        status, data = await one_shot(a, "GET", path, headers=auth)
        page = json.loads(data)
        present.update(int(v["versionNumber"]) for v in page.get("versions", []))
        token = page.get("nextPageToken")
        if not token:
            break
    missing = sorted(set(stats.acknowledged) - present)
    warm = [rss for t, rss in samples if t - started < minutes * 60 * 0.25]
    later = [rss for t, rss in samples if t - started >= minutes * 60 * 0.25]
    warm_level = max(warm) if warm else 0
    peak_later = max(later) if later else 0
    growth = (peak_later / warm_level - 1) if warm_level else 0
    result = {
        "minutes": minutes, "fetchers": FETCHERS, "subscribers": SUBSCRIBERS,
        "fetches": stats.fetches, "fetches_per_second": round(sum(stats.fetches.values()) / (time.time() - started)),
        "publishes_acknowledged": len(stats.acknowledged), "publish_failures": stats.publish_failures,
        "missing_versions": missing[:20], "server_errors": stats.server_errors,
        "connection_errors": stats.connection_errors, "node_b_kills": b.deaths,
        "streams_opened": stats.streams_opened, "streams_dropped": stats.streams_dropped,
        "rss_kib_warmup_max": warm_level, "rss_kib_after_max": peak_later, "rss_growth": round(growth, 3),
    }
    print(json.dumps(result))
    for node in (a, b):
        if node.process.poll() is None:
            node.process.terminate()
            node.process.wait(timeout=30)
    failures = []
    if missing:
        failures.append(f"{len(missing)} acknowledged versions are missing")
    if stats.server_errors["A"]:
        failures.append(f"node A answered {stats.server_errors['A']} requests with 5xx")
    if growth > 0.2:
        failures.append(f"node A's memory grew {growth:.0%} after warm-up")
    if not stats.acknowledged or not sum(stats.fetches.values()):
        failures.append("nothing was published or fetched")
    for failure in failures:
        print("soak: FAILED: " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(float(sys.argv[1]), sys.argv[2], sys.argv[3])))

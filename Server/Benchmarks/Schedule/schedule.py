"""Scheduled change requests under a crash loop (issue #29): two `vane serve` nodes on one
PostgreSQL database; each round opens REQUESTS template change requests over ENVIRONMENTS
environments of a new project, approves them, schedules them due evenly over WINDOW seconds, kills
node A with SIGKILL halfway through that window and starts it again at once. Then it counts, from
the database, how many versions each request published (exactly one, none missed) and the lag of
each apply after its due time (the time the applying transaction stamped on the request minus its
`applyTime`). The baseline, in the same run: how long `POST …/apply` of an approved request takes
when asked directly (DIRECT per round, on a node not being killed).

Usage: schedule.py VANE_BINARY DATABASE_URL PSQL [ROUNDS] [REQUESTS] [ENVIRONMENTS] [WINDOW]
Exits 1 unless every request applied exactly once and the p99 lag is under a second.
"""
import concurrent.futures
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

ADMIN = "vane_admin_schedule-" + os.urandom(16).hex()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stamp(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".%03dZ" % int(round(seconds % 1 * 1000) % 1000)


class Node:
    def __init__(self, name, binary, database, data, secret_file):
        self.name, self.binary, self.database, self.data = name, binary, database, data
        self.secret_file, self.port, self.process = secret_file, free_port(), None

    def start(self):
        os.makedirs(self.data, exist_ok=True)
        log = open(os.path.join(self.data, "log"), "ab")
        self.process = subprocess.Popen(
            [self.binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--database", self.database,
             "--data-dir", self.data, "--admin-key", ADMIN, "--secret-file", self.secret_file,
             "--rate-limit", "0", "--address-rate-limit", "0", "--key-rate-limit", "0", "--no-demo",
             "--no-console"],
            stdout=log, stderr=log, env={**os.environ, "VANE_LOG_LEVEL": "error"})

    def wait_ready(self):
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                status, _ = self.call("GET", "/readyz", key=None)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise SystemExit(f"node {self.name} did not become ready")

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def call(self, method, path, body=None, key=ADMIN, headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        fields = {"Content-Type": "application/json", **(headers or {})}
        if key:
            fields["Authorization"] = "Bearer " + key
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=fields)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, (json.loads(data) if data.startswith(b"{") else None)


def must(result, expected, what):
    status, data = result
    if status != expected:
        raise SystemExit(f"{what}: {status} {data}")
    return data


def psql(binary, url, sql):
    out = subprocess.run([binary, url, "-At", "-F", "\t", "-c", sql], check=True, capture_output=True, text=True)
    return [line.split("\t") for line in out.stdout.splitlines() if line]


DIRECT = 5


def direct_applies(b, project, reviewer):
    """Times DIRECT approved requests applied with POST …/apply, in milliseconds."""
    base = f"/v1/projects/{project}/environments/direct"
    must(b.call("POST", f"/v1/projects/{project}/environments", {"id": "direct"}), 201, "environment")
    must(b.call("PUT", base + "/change-policy", {"required": True, "approvals": 1}), 200, "policy")
    times = []
    for index in range(DIRECT):
        template = {"parameters": {f"d{index}": {"defaultValue": {"value": str(index)}}}}
        opened = must(b.call("POST", base + "/change-requests",
                             {"title": f"direct {index}", "change": {"kind": "template", "template": template}}),
                      201, "open")
        must(b.call("POST", base + f"/change-requests/{opened['id']}/approve",
                    {"contentHash": opened["contentHash"]}, key=reviewer), 200, "approve")
        started = time.perf_counter()
        must(b.call("POST", base + f"/change-requests/{opened['id']}/apply", {}), 200, "apply")
        times.append((time.perf_counter() - started) * 1000)
    return times


def round_(number, a, b, reviewer, requests, environments, window):
    project = f"r{number}"
    env_ids = [f"e{index}" for index in range(environments)]
    must(b.call("POST", "/v1/projects", {"id": project}), 201, "project")
    for env in env_ids:
        base = f"/v1/projects/{project}/environments/{env}"
        must(b.call("POST", f"/v1/projects/{project}/environments", {"id": env}), 201, "environment")
        must(b.call("PUT", base + "/template", {"parameters": {"base": {"defaultValue": {"value": "1"}}}},
                    headers={"If-Match": "*"}), 200, "base template")
        must(b.call("PUT", base + "/change-policy", {"required": True, "approvals": 1}), 200, "policy")
    ids = []
    for index in range(requests):
        env = env_ids[index % environments]
        base = f"/v1/projects/{project}/environments/{env}"
        node = a if index % 2 == 0 else b
        # Each request adds its own parameter: every one rebases cleanly past the ones before it.
        template = {"parameters": {"base": {"defaultValue": {"value": "1"}},
                                   f"p{index}": {"defaultValue": {"value": str(index)}}}}
        opened = must(node.call("POST", base + "/change-requests",
                                {"title": f"change {index}", "change": {"kind": "template", "template": template}}),
                      201, "open")
        # On node B, where the reviewer's key was created (node A learns of it within a second).
        must(b.call("POST", base + f"/change-requests/{opened['id']}/approve",
                    {"contentHash": opened["contentHash"]}, key=reviewer), 200, "approve")
        ids.append((env, opened["id"]))
    # Time to send every schedule before the first is due.
    margin = 2.0 + 0.15 * requests
    first_due = time.time() + margin
    spacing = window / max(1, requests - 1)

    def schedule(index):
        env, id = ids[index]
        node = a if index % 2 == 0 else b
        base = f"/v1/projects/{project}/environments/{env}"
        must(node.call("POST", base + f"/change-requests/{id}/schedule",
                       {"applyTime": stamp(first_due + index * spacing)}), 200, "schedule")

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(schedule, range(len(ids))))
    if time.time() > first_due:
        raise SystemExit(f"scheduling took longer than the {margin:g} s margin; use fewer requests")
    # Node A dies halfway through the due times, and comes back at once.
    time.sleep(max(0.0, first_due + window / 2 - time.time()))
    a.kill()
    a.start()
    a.wait_ready()
    deadline = time.time() + 60
    while time.time() < deadline:
        waiting = 0
        for env in env_ids:
            listed = must(b.call("GET", f"/v1/projects/{project}/environments/{env}/change-requests?state=scheduled"),
                          200, "list")
            waiting += len(listed["changeRequests"])
        if waiting == 0:
            break
        time.sleep(0.2)
    return project, [id for _, id in ids], direct_applies(b, project, reviewer)


def main():
    binary, url, psql_binary = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    requests = int(sys.argv[5]) if len(sys.argv) > 5 else 40
    environments = int(sys.argv[6]) if len(sys.argv) > 6 else 4
    window = float(sys.argv[7]) if len(sys.argv) > 7 else 2.0
    work = tempfile.mkdtemp(prefix="vane-schedule-")
    secret_file = os.path.join(work, "secret")
    with open(secret_file, "w") as f:
        f.write(os.urandom(32).hex())
    a = Node("A", binary, url, os.path.join(work, "a"), secret_file)
    b = Node("B", binary, url, os.path.join(work, "b"), secret_file)
    a.start()
    a.wait_ready()
    b.start()
    b.wait_ready()
    try:
        reviewer = must(b.call("POST", "/v1/keys", {"name": "reviewer", "role": "admin"}), 201, "reviewer")["key"]
        lags, counts, missed, states, direct = [], {}, [], {}, []
        started = time.time()
        for number in range(rounds):
            project, ids, direct_times = round_(number, a, b, reviewer, requests, environments, window)
            direct += direct_times
            rows = psql(psql_binary, url,
                        f"SELECT id, state, apply_time, update_time FROM change_requests WHERE project_id = '{project}' "
                        "AND environment_id <> 'direct'")
            descriptions = [row[0] for row in psql(
                psql_binary, url,
                f"SELECT description FROM template_versions WHERE project_id = '{project}' AND description LIKE '%(cr_%'")]
            for id, state, apply_time, update_time in rows:
                states[state] = states.get(state, 0) + 1
                applies = sum(1 for description in descriptions if f"({id})" in description)
                counts[applies] = counts.get(applies, 0) + 1
                if state == "applied":
                    lags.append(int(update_time) - int(apply_time))
                else:
                    missed.append(id)
            print(f"round {number + 1}/{rounds}: {len(rows)} requests, node A killed and restarted", flush=True)
        elapsed = time.time() - started
    finally:
        for node in (a, b):
            if node.process and node.process.poll() is None:
                node.process.terminate()
                node.process.wait()
    lags.sort()
    direct.sort()
    total = sum(counts.values())

    def percentile(p, values=lags):
        return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")

    print()
    print(f"| figure | result |")
    print(f"|---|---|")
    print(f"| rounds (node A SIGKILLed mid-window, restarted) | {rounds} in {elapsed:.0f} s |")
    print(f"| requests scheduled | {total} ({requests} per round over {environments} environments, due within {window:g} s) |")
    print(f"| applied exactly once | {counts.get(1, 0)} |")
    print(f"| applied twice or more | {sum(v for k, v in counts.items() if k > 1)} |")
    print(f"| never applied | {counts.get(0, 0)} (states: {states}) |")
    print(f"| lag after due time, p50 / p99 / max | {percentile(0.5)} / {percentile(0.99)} / {lags[-1] if lags else 'n/a'} ms |")
    print(f"| baseline: POST …/apply answered, p50 / p99 / max ({len(direct)} direct applies) | "
          f"{percentile(0.5, direct):.0f} / {percentile(0.99, direct):.0f} / {direct[-1]:.0f} ms |")
    ok = counts.get(1, 0) == total and total == rounds * requests and percentile(0.99) < 1000
    print()
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

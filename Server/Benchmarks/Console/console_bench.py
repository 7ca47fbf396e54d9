"""Server-side render time of the console's flags page and review page on a large template (see
../console-benchmark.sh).

    console_bench.py VANE_BINARY [--rounds 40] [--parameters 3000] [--conditions 2000] [--changes 20]

Starts `vane serve` (SQLite, in a temporary directory), publishes a generated client template of
PARAMETERS parameters and CONDITIONS conditions (expressions on country, language, app version,
custom signals and seeded percent splits; every parameter has a default and 0–3 conditional
values) over the demo project's production environment, signs the first admin in through the console's own forms,
saves CHANGES flags with a new default into the admin's draft through the flag editor, and then
requests, one after another over loopback HTTP/1.1 keep-alive, ROUNDS times each (after 5 untimed):

  - `GET /healthz` — the baseline: the same server, router, middleware and connection, no work;
  - `GET …/flags` — every one of the PARAMETERS rows;
  - `GET …/review` — the diff of the draft against live, validation of the whole draft, the
    sample of users whose value changes;
  - each page again, "after an edit": before each timed request the draft is saved once more
    through the flag editor (untimed), so the page is the first after a change. The plain rows
    are reloads of an unchanged draft, which reuse what the server worked out for it.

It prints the median and 90th percentile wall time of each, and each page's time minus the
baseline's median (the render itself). Exit 1 if a page answers anything but 200.
"""

import http.client
import json
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

COUNTRIES = ["us", "gb", "de", "fr", "at", "ch", "jp", "br", "in", "ca"]
LANGUAGES = ["en", "de", "fr", "ja", "pt-BR", "es"]
PASSWORD = "console benchmark password 1"
ENVIRONMENT = "/projects/demo/environments/production"


def generate(parameters: int, conditions: int, seed: int = 14) -> dict:
    rng = random.Random(seed)
    condition_list = []
    for index in range(conditions):
        kind = index % 5
        if kind == 0:
            expression = f"device.country in {rng.sample(COUNTRIES, 2)!r}"
        elif kind == 1:
            expression = f"device.language in {rng.sample(LANGUAGES, 2)!r}"
        elif kind == 2:
            expression = f"app.version.>=(['{rng.randint(1, 4)}.{rng.randint(0, 9)}.0'])"
        elif kind == 3:
            expression = f"app.customSignal['plan'].exactlyMatches(['pro', 'team']) && percent('exp{index}') <= 50"
        else:
            expression = f"percent('exp{index}') between {rng.randint(0, 40)} and {rng.randint(50, 100)}"
        condition_list.append({"name": f"c{index}", "expression": expression})
    parameter_map = {}
    for index in range(parameters):
        kind = index % 3
        value_type = ["BOOLEAN", "NUMBER", "STRING"][kind]
        default = ["true", str(index), f"text {index}"][kind]
        conditional = {}
        for name in rng.sample(range(conditions), rng.randint(0, 3)):
            conditional[f"c{name}"] = {"value": ["false", str(index + 1), f"other {index}"][kind]}
        parameter_map[f"key_{index}"] = {
            "defaultValue": {"value": default},
            "conditionalValues": conditional,
            "valueType": value_type,
            "description": f"Parameter {index}",
        }
    return {"conditions": condition_list, "parameters": parameter_map}


class Client:
    """One keep-alive HTTP/1.1 connection with the console's session cookie."""

    def __init__(self, port: int):
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.cookie = None

    def request(self, method, path, body=None, headers=None):
        headers = dict(headers or {})
        if self.cookie:
            headers["Cookie"] = self.cookie
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        for name, value in response.getheaders():
            if name.lower() == "set-cookie" and value.startswith("vane_session="):
                self.cookie = value.split(";", 1)[0]
        return response.status, response.headers, data

    def form(self, path, fields):
        body = urllib.parse.urlencode(fields)
        return self.request("POST", path, body, {"Content-Type": "application/x-www-form-urlencoded"})

    def csrf(self, path):
        status, _, data = self.request("GET", path)
        assert status == 200, (path, status, data[:300])
        return re.search(rb'name="_csrf" value="([^"]+)"', data).group(1).decode()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def timed(client, path, rounds, before=None):
    """Times ROUNDS GETs of PATH; `before`, if given, runs untimed before each one."""
    for _ in range(5):
        if before:
            before()
        status, _, _ = client.request("GET", path)
        assert status == 200, (path, status)
    times = []
    size = 0
    for _ in range(rounds):
        if before:
            before()
        started = time.perf_counter()
        status, _, data = client.request("GET", path)
        times.append((time.perf_counter() - started) * 1000)
        assert status == 200, (path, status)
        size = len(data)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9) - 1], size


def main(arguments):
    binary = arguments[0]
    options = {"--rounds": 40, "--parameters": 3000, "--conditions": 2000, "--changes": 20}
    rest = arguments[1:]
    for name, value in zip(rest[::2], rest[1::2]):
        options[name] = int(value)
    work = Path(tempfile.mkdtemp(prefix="vane-console-bench-"))
    port = free_port()
    log = open(work / "log", "w")
    process = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--data-dir", str(work / "data"), "--rate-limit", "0",
         "--address-rate-limit", "0", "--key-rate-limit", "0"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(300):
            if "Client key" in (work / "log").read_text():
                break
            if process.poll() is not None:
                raise SystemExit("vane serve exited:\n" + (work / "log").read_text())
            time.sleep(0.1)
        data = work / "data"
        admin_key = (data / "admin-key").read_text().strip()
        first = re.search(r"password: (\S+)", (data / "console-admin-password").read_text()).group(1)
        api = Client(port)
        bearer = {"Authorization": "Bearer " + admin_key, "Content-Type": "application/json"}
        template = generate(options["--parameters"], options["--conditions"])
        status, _, body = api.request(
            "PUT", f"/v1{ENVIRONMENT}/template", json.dumps(template), {**bearer, "If-Match": "*"}
        )
        assert status == 200, body[:500]

        console = Client(port)
        status, _, _ = console.form("/sign-in", {"email": "admin", "password": first, "next": "/"})
        assert status == 303, status
        token = console.csrf("/account")
        status, _, body = console.form(
            "/account/password", {"_csrf": token, "username": "admin", "current": first, "new": PASSWORD,
                                  "repeat": PASSWORD}
        )
        assert status in (200, 303), (status, body[:300])
        token = console.csrf("/account")
        names = [condition["name"] for condition in template["conditions"]]
        position = {name: index for index, name in enumerate(names)}
        def edit(index, text="changed"):
            key = f"key_{index * 7}"
            parameter = template["parameters"][key]
            fields = {"_csrf": token, "type": parameter["valueType"], "default_mode": "value",
                      "default_value": "false" if parameter["valueType"] == "BOOLEAN" else "1" if
                      parameter["valueType"] == "NUMBER" else text, "description": parameter["description"]}
            for name, value in parameter["conditionalValues"].items():
                slot = position[name]
                fields.update({f"c{slot}_name": name, f"c{slot}_mode": "value", f"c{slot}_value": value["value"]})
            status, _, body = console.form(f"{ENVIRONMENT}/flags/{key}/edit", fields)
            assert status == 303, (key, status, body[:500])

        for index in range(options["--changes"]):
            edit(index)
        # A STRING flag the draft already changes, edited again before each "after an edit" request.
        string_index = next(index for index in range(options["--changes"])
                            if template["parameters"][f"key_{index * 7}"]["valueType"] == "STRING")
        edits = iter(range(10**9))

        def edit_again():
            edit(string_index, f"changed {next(edits)}")

        rounds = options["--rounds"]
        print(f"console render, {options['--parameters']} parameters / {options['--conditions']} conditions, "
              f"a draft changing {options['--changes']} flags, {rounds} rounds each")
        print(f"machine: {len(__import__('os').sched_getaffinity(0))} cores, {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}")
        baseline = timed(console, "/healthz", rounds)
        rows = [("GET /healthz (baseline)", baseline)]
        for label, path in (("flags page", f"{ENVIRONMENT}/flags"), ("review page", f"{ENVIRONMENT}/review")):
            rows.append((label, timed(console, path, rounds)))
            rows.append((label + ", after an edit", timed(console, path, rounds, before=edit_again)))
        print(f"{'request':<26} {'median ms':>10} {'p90 ms':>9} {'minus baseline':>15} {'bytes':>10}")
        for label, (median, p90, size) in rows:
            print(f"{label:<26} {median:>10.2f} {p90:>9.2f} {median - baseline[0]:>15.2f} {size:>10}")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])

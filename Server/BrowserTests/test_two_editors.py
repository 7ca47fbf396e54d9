"""Two editors on two `vane serve` nodes sharing one PostgreSQL server, in a real browser.

Ana creates a percent split and a flag that uses it, her draft and her session live in the
database (she reloads it on the other node), Ben publishes a change to the same flag from the
other node first, Ana sees his change as a conflict on that field alone (her description of
the flag merges), is told that keeping hers reverts his change, keeps hers, reviews the merged
diff and publishes; then an app's fetch with the client key gets the new values for the contexts
that match and not for the others. Last, Ben and Ana change different fields of one flag and
Ben's review merges them without a conflict. Needs VANE_TEST_POSTGRES_URL (scripts/console-test starts a
PostgreSQL server through scripts/with-postgres when it is not set); fails, never skips, without.
"""

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
from conftest import change_password, check_page, free_port, sign_in, start_server
from playwright.sync_api import expect

PRODUCTION = "/projects/demo/environments/production"
PASSWORD = "two editors share one database 9"


def micro_percentile(seed: str, randomization_id: str) -> int:
    """Firebase's percent hash (reference §7.1), computed here independently of Vane."""
    digest = hashlib.sha256(f"{seed}.{randomization_id}".encode()).digest()
    return int.from_bytes(digest, "big") % 100_000_000


def in_first_half(seed: str, randomization_id: str) -> bool:
    """`percent('seed') between 0 and 50`: lower bound exclusive, upper inclusive."""
    return 0 < micro_percentile(seed, randomization_id) <= 50_000_000


@pytest.fixture(scope="module")
def nodes():
    """Node A (first start: demo project, keys, first admin) and node B on the same database."""
    url = os.environ.get("VANE_TEST_POSTGRES_URL")
    assert url, "VANE_TEST_POSTGRES_URL is not set: run scripts/console-test (it starts PostgreSQL)"
    psql = Path(os.environ.get("VANE_TEST_POSTGRES_BIN", "/usr/bin")) / "psql"
    database = "browser_" + uuid.uuid4().hex[:10]
    subprocess.run([str(psql), url, "-q", "-c", f"CREATE DATABASE {database}"], check=True)
    database_url = url.rsplit("/", 1)[0] + "/" + database
    a = start_server(["--database", database_url])
    data_b = Path(tempfile.mkdtemp(prefix="vane-console-b-")) / "data"
    data_b.mkdir(parents=True)
    port_b = free_port()
    log_b = open(data_b.parent / "stdout", "w")
    process_b = subprocess.Popen(
        [os.environ.get("VANE_BIN", "vane"), "serve", "--port", str(port_b), "--data-dir", str(data_b),
         "--database", database_url],
        stdout=log_b,
        stderr=subprocess.STDOUT,
    )
    url_b = a.url.rstrip("/").rsplit(":", 1)[0] + f":{port_b}"  # the same host, so cookies are shared
    for _ in range(300):
        if process_b.poll() is not None:
            raise RuntimeError("node B exited:\n" + (data_b.parent / "stdout").read_text())
        try:
            with urllib.request.urlopen(url_b + "/readyz", timeout=1) as response:
                if response.status == 200:
                    break
        except OSError:
            pass
        time.sleep(0.1)
    else:
        raise RuntimeError("node B did not become ready:\n" + (data_b.parent / "stdout").read_text())
    yield a, url_b
    for process in (a.process, process_b):
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
    shutil.rmtree(a.data.parent, ignore_errors=True)
    shutil.rmtree(data_b.parent, ignore_errors=True)


def editor_page(browser, node_a, node_url, name):
    """A browser of its own, signed in on `node_url` as a new production editor."""
    email = f"{name}-{uuid.uuid4().hex[:6]}@example.com"
    status, body, _ = node_a.api(
        "POST", "/v1/users", {"email": email, "name": name, "role": "editor", "environments": ["demo/production"]}
    )
    assert status == 201, body
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, node_a if node_url is None else _At(node_url), email, body["oneTimePassword"])
    expect(page).to_have_url(re.compile(r"/account$"))
    change_password(page, body["oneTimePassword"], PASSWORD)
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    return page, errors


class _At:
    """What `sign_in` needs of a server: its address."""

    def __init__(self, url):
        self.url = url


def test_two_editors_on_two_nodes_conflict_merge_publish_and_apps_see_it(browser, nodes):
    a, url_b = nodes
    ana, ana_errors = editor_page(browser, a, None, "Ana")
    ben, ben_errors = editor_page(browser, a, url_b, "Ben")

    # Ana, on node A: a percent split built with the rule builder.
    ana.goto(a.url + PRODUCTION + "/conditions/new")
    ana.get_by_label("Name", exact=True).fill("spring_half")
    ana.get_by_label("Seed (optional; the same seed gives the same users)").fill("spring")
    ana.get_by_label("From percent").fill("0")
    ana.get_by_label("To percent").fill("50")
    ana.get_by_role("group", name="Percent of users").get_by_role("button", name="Add to expression").click()
    expect(ana.get_by_label("Expression", exact=True)).to_have_value("percent('spring') between 0 and 50")
    ana.get_by_role("button", name="Save to draft").click()
    expect(ana.get_by_text("Saved the condition spring_half in your draft")).to_be_visible()

    # A new flag: German users get one text, half of everyone else another.
    ana.goto(a.url + PRODUCTION + "/flags/new")
    ana.get_by_label("Key", exact=True).fill("spring_banner")
    ana.get_by_label("Type", exact=True).select_option(label="String")
    ana.get_by_text("Add a value for another condition").click()
    ana.get_by_label("Kind of value for germany_austria", exact=True).select_option(label="Value")
    ana.get_by_label("Value for germany_austria", exact=True).fill("Frühling!")
    ana.get_by_label("Kind of value for spring_half", exact=True).select_option(label="Value")
    ana.get_by_label("Value for spring_half", exact=True).fill("Spring!")
    ana.get_by_label("Kind of value for everyone else", exact=True).select_option(label="Value")
    ana.get_by_label("Value for everyone else", exact=True).fill("Welcome")
    ana.get_by_label("Description").fill("The spring campaign's banner.")
    check_page(ana, "flag-editor")
    ana.get_by_role("button", name="Save to draft").click()
    expect(ana).to_have_url(re.compile(r"/flags/spring_banner/edit\?saved=1$"))

    # And a new default and description for the home banner; Ben is about to change its default too.
    ana.goto(a.url + PRODUCTION + "/flags/banner_text/edit")
    ana.get_by_label("Value for everyone else", exact=True).fill("Ana's spring welcome")
    ana.get_by_label("Description").fill("Ana's spring banner words")
    ana.get_by_role("button", name="Save to draft").click()
    expect(ana.get_by_text("Your draft has 3 unpublished change(s)")).to_be_visible()

    # The draft and the session are in the database: node B knows Ana and shows her draft.
    ana.goto(url_b + PRODUCTION + "/review")
    expect(ana.get_by_role("region", name="What changes against version 1")).to_contain_text("spring_banner")
    expect(ana.get_by_role("region", name="Who would see a different value")).to_contain_text("spring_banner")
    check_page(ana, "review")

    # Ben, on node B, sees that Ana has a draft open, and publishes his own banner first.
    ben.goto(url_b + PRODUCTION + "/flags")
    expect(ben.locator(".also-editing")).to_contain_text("Ana")
    ben.goto(url_b + PRODUCTION + "/flags/banner_text/edit")
    ben.get_by_label("Value for everyone else", exact=True).fill("Ben's spring welcome")
    ben.get_by_role("button", name="Save to draft").click()
    ben.goto(url_b + PRODUCTION + "/review")
    ben.get_by_label("Why? (shown in the history)").fill("Ben's banner")
    ben.get_by_role("button", name="Publish").click()
    expect(ben).to_have_url(re.compile(r"/flags\?published=2$"))

    # Ana publishes from node A the version she reviewed: refused, and she sees Ben's change
    # and the conflict on banner_text's default alone (her description merges), with what
    # keeping hers would revert said before she chooses.
    ana.goto(a.url + PRODUCTION + "/review")
    expect(ana.get_by_role("heading", name="Published since you started: version 2")).to_be_visible()
    conflicts = ana.get_by_role("region", name="Conflicts")
    expect(conflicts).to_contain_text("banner_text")
    expect(conflicts).to_contain_text("Ben's spring welcome")
    expect(conflicts).to_contain_text("Ana's spring welcome")
    default_choice = conflicts.get_by_role("group", name="Flag banner_text: defaultValue")
    expect(default_choice).to_contain_text(
        "Keeping mine reverts live change: banner_text defaultValue \"Welcome to Vane!\" → \"Ben's spring welcome\""
    )
    expect(conflicts.get_by_role("group", name=re.compile("description"))).to_have_count(0)
    expect(ana.locator("#publish-blocked")).to_contain_text("Settle the conflicts above first.")
    check_page(ana, "review-conflict")
    default_choice.get_by_label("Keep mine").check()
    ana.get_by_role("button", name="Settle conflicts").click()
    expect(ana.get_by_text(re.compile("^Conflicts settled"))).to_be_visible()
    merged = ana.get_by_role("region", name="What changes against version 2")
    expect(merged).to_contain_text("spring_banner")
    expect(merged).to_contain_text("Ana's spring welcome")
    ana.get_by_label("Why? (shown in the history)").fill("Spring campaign")
    ana.get_by_role("button", name="Publish").click()
    expect(ana).to_have_url(re.compile(r"/flags\?published=3$"))

    # An app with the client key, on either node, gets what the split and the country decide.
    ids = [f"user-{n}" for n in range(40)]
    first_half = [i for i in ids if in_first_half("spring", i)]
    second_half = [i for i in ids if not in_first_half("spring", i)]
    assert first_half and second_half
    b = _Node(a, url_b)
    for server in (a, b):
        assert server.fetch({"randomizationId": ids[0], "device.country": "de"})["spring_banner"] == "Frühling!"
        for randomization_id in first_half[:5]:
            entries = server.fetch({"randomizationId": randomization_id, "device.country": "fr"})
            assert entries["spring_banner"] == "Spring!", randomization_id
            assert entries["banner_text"] == "Ana's spring welcome"
        for randomization_id in second_half[:5]:
            assert server.fetch({"randomizationId": randomization_id})["spring_banner"] == "Welcome", randomization_id
    status, live, _ = a.api("GET", "/v1/projects/demo/environments/production/template")
    assert status == 200 and live["parameters"]["banner_text"]["description"] == "Ana's spring banner words", live

    # Two people change different fields of one flag: Ben its description in a draft on node B,
    # Ana its default, published first. Ben's review merges them without a conflict.
    ben.goto(url_b + PRODUCTION + "/flags/spring_banner/edit")
    ben.get_by_label("Description").fill("Ben's note on the spring banner")
    ben.get_by_role("button", name="Save to draft").click()
    expect(ben).to_have_url(re.compile(r"/flags/spring_banner/edit\?saved=1$"))
    ana.goto(a.url + PRODUCTION + "/flags/spring_banner/edit")
    ana.get_by_label("Value for everyone else", exact=True).fill("Hello")
    ana.get_by_role("button", name="Save to draft").click()
    ana.goto(a.url + PRODUCTION + "/review")
    ana.get_by_label("Why? (shown in the history)").fill("Plainer welcome")
    ana.get_by_role("button", name="Publish").click()
    expect(ana).to_have_url(re.compile(r"/flags\?published=4$"))
    ben.goto(url_b + PRODUCTION + "/review")
    expect(ben.get_by_role("status").filter(has_text="touch different fields")).to_be_visible()
    expect(ben.get_by_role("region", name="Conflicts")).to_have_count(0)
    check_page(ben, "review-merged")
    ben.get_by_label("Why? (shown in the history)").fill("Ben's note")
    ben.get_by_role("button", name="Publish").click()
    expect(ben).to_have_url(re.compile(r"/flags\?published=5$"))
    status, live, _ = a.api("GET", "/v1/projects/demo/environments/production/template")
    spring = live["parameters"]["spring_banner"]
    assert spring["defaultValue"] == {"value": "Hello"} and spring["description"] == "Ben's note on the spring banner", spring
    assert not ana_errors and not ben_errors, ana_errors + ben_errors


class _Node:
    """Node B's address with node A's keys, for fetches."""

    def __init__(self, a, url):
        self._a, self.url = a, url

    def fetch(self, context):
        original = self._a.url
        self._a.url = self.url
        try:
            return self._a.fetch(context)
        finally:
            self._a.url = original

"""The rollout pages in a real browser (issue #30): a release manager opens a running rollout from
its flag, reads its guardrail, pauses, resumes and rolls it back; creates another from the form and
starts it; a read-only person sees the page without a button. axe-core and screenshots at phone
and desktop widths."""

import datetime
import re

import pytest
from conftest import check_page, person, shop, signed_in_page
from playwright.sync_api import expect

PROJECT = "rollout-shop"
PRODUCTION = f"/projects/{PROJECT}/environments/production"
API = f"/v1/projects/{PROJECT}/environments/production"
ROLLOUT = "spring-banner"
PLAN = {
    "id": ROLLOUT,
    "description": "the spring banner",
    "parameters": [{"key": "banner_text", "value": "Spring sale!"}],
    "steps": [10, 50, 100],
    "minimumHoldSeconds": 3600,
    "minimumUnitsPerArm": 100,
    "guardrails": [{"event": "app_crashed", "kind": "conversion", "bad": "increase", "margin": 0.01}],
}


def send_arms(server, rollout: str, units: int, crashes: dict):
    """What apps would send: `units` exposures per arm of the rollout's first step, and crashes."""
    # A fetch first, as an app's exposures follow one: the guard holds on exposures of a version
    # no app fetched from this server (a health check).
    status, fetched, _ = server.api("POST", API + "/fetch", {"context": {"randomizationId": "sender"}})
    assert status == 200, fetched
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    events = []
    for arm in ("treatment", "comparison"):
        for index in range(units):
            unit = f"{rollout}-{arm}-{index}"
            events.append({"id": f"x-{unit}", "type": "exposure", "time": now, "unit": unit,
                           "experiment": f"rollout-{rollout}-1", "variant": arm,
                           "templateVersion": str(fetched["templateVersion"])})
            if index < crashes[arm]:
                events.append({"id": f"c-{unit}", "type": "metric", "time": now, "unit": unit, "name": "app_crashed"})
    status, body, _ = server.api("POST", API + "/events", {"events": events})
    assert status == 200 and body["rejected"] == [], body


@pytest.fixture(scope="module")
def people(server, browser):
    shop(server, PROJECT, {"production": "red"})
    status, body, _ = server.api("POST", API + "/rollouts", PLAN)
    assert status == 201, body
    status, body, _ = server.api("POST", API + f"/rollouts/{ROLLOUT}/start")
    assert status == 200, body
    send_arms(server, ROLLOUT, 150, {"treatment": 6, "comparison": 4})
    manager = person(server, "Robin", "editor", [f"{PROJECT}/production"])
    reader = person(server, "Sam", "viewer", [])
    contexts = []
    pages = {}
    for name, who in (("manager", manager), ("reader", reader)):
        context, page = signed_in_page(browser, server, who)
        errors = []
        page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
        contexts.append((context, errors))
        pages[name] = page
    yield pages
    for context, errors in contexts:
        context.close()
        assert not errors, errors


def test_a_release_manager_reads_the_guardrail_pauses_resumes_and_rolls_back(people, server):
    page = people["manager"]
    # From the flag's row to its rollout.
    page.goto(server.url + PRODUCTION + "/flags")
    page.get_by_role("link", name=f"rollout {ROLLOUT}").click()
    expect(page.get_by_role("heading", name=re.compile(f"Rollout {ROLLOUT}"))).to_be_visible()
    expect(page.locator("[aria-current=step]")).to_contain_text("10 %")

    guardrail = page.get_by_role("region", name=re.compile("Guardrail app_crashed"))
    expect(guardrail.get_by_role("img", name=re.compile("app_crashed: treatment − comparison"))).to_be_visible()
    expect(guardrail).to_contain_text("not significantly worse")
    expect(guardrail).to_contain_text("4.00 %")  # 6 of 150 treatment units crashed
    expect(page.get_by_role("main")).to_contain_text("150 treatment and 150 comparison units exposed")
    check_page(page, "rollout-running")

    page.get_by_role("button", name="Pause").click()
    expect(page.get_by_role("status")).to_contain_text("Paused")
    expect(page.get_by_role("heading", name=re.compile(f"Rollout {ROLLOUT}"))).to_contain_text("paused")
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_role("status")).to_contain_text("Resumed")

    page.get_by_role("link", name="Roll back…").click()
    expect(page.get_by_role("heading", name=re.compile("Roll back rollout"))).to_be_visible()
    check_page(page, "rollout-roll-back")
    page.get_by_label("Why?").fill("support tickets about the banner")
    page.get_by_role("button", name="Roll back and publish").click()
    expect(page.get_by_role("status")).to_contain_text("Rolled back")
    decisions = page.get_by_role("table", name=re.compile("Every decision"))
    expect(decisions.get_by_role("row").nth(1)).to_contain_text("support tickets about the banner")
    expect(page.get_by_role("button", name="Pause")).to_have_count(0)
    status, body, _ = server.api("GET", API + f"/rollouts/{ROLLOUT}")
    assert body["state"] == "rolled_back", body
    assert [decision["action"] for decision in body["decisions"]] == ["start", "pause", "resume", "roll_back"]


def test_a_release_manager_creates_a_rollout_from_the_form_and_starts_it(people, server):
    page = people["manager"]
    page.goto(server.url + PRODUCTION + "/flags/payments_enabled/edit")
    page.get_by_role("link", name="Roll out a new value gradually").click()
    expect(page.get_by_label("Flag 1", exact=True)).to_have_value("payments_enabled")
    page.get_by_label("Id", exact=True).fill("payments-off")
    page.get_by_label("New value of flag 1").fill("false")
    page.get_by_label("Steps").fill("5, 100")
    page.get_by_label("Event 1", exact=True).fill("checkout_failed")
    check_page(page, "rollout-new")
    page.get_by_role("button", name="Create the draft").click()
    expect(page.get_by_role("status")).to_contain_text("Created as a draft")
    page.get_by_role("button", name="Start the rollout").click()
    expect(page.get_by_role("status")).to_contain_text("Started")
    expect(page.locator("[aria-current=step]")).to_contain_text("5 %")


def test_a_read_only_person_sees_the_rollout_without_a_button(people, server):
    page = people["reader"]
    page.goto(server.url + PRODUCTION + "/rollouts")
    page.get_by_role("link", name="payments-off").click()
    expect(page.get_by_role("heading", name=re.compile("Rollout payments-off"))).to_be_visible()
    expect(page.get_by_role("region", name=re.compile("Guardrail checkout_failed"))).to_be_visible()
    for name in ("Pause", "Resume", "Start the rollout", "Request approval"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    for name in ("Stop…", "Roll back…", "New rollout"):
        expect(page.get_by_role("link", name=name)).to_have_count(0)
    check_page(page, "rollout-read-only")

"""The experiment pages in a real browser (issue #15): find the experiment from its tab, start
it, read its results with the health checks and the chart, stop it; axe-core and screenshots at
phone and desktop widths."""

import datetime
import re

import pytest
from conftest import check_page
from playwright.sync_api import expect

EXPERIMENTS = "/projects/demo/environments/production/experiments"
DEFINITION = {
    "key": "checkout-button",
    "hypothesis": "The one-page checkout raises completed checkouts",
    "parameters": ["checkout_variant"],
    "variants": [
        {"name": "control", "weight": 50},
        {"name": "one-page", "condition": "checkout_test_b", "weight": 50},
    ],
    "primaryMetric": {"event": "checkout_completed", "kind": "conversion"},
    "guardrailMetrics": [{"event": "revenue", "kind": "mean"}],
}


# The admin chooses their own password first when this file runs without test_console.py.
pytestmark = pytest.mark.usefixtures("own_admin_password")


def send_population(server):
    """What apps would send: 150 units per variant, 30 and 90 checkouts, revenue per checkout."""
    server.fetch({"randomizationId": "someone"})  # the live version counts as fetched
    # Exposures a minute ago (the server counts those up to 5 minutes before the start, for device
    # clocks), the checkouts after them.
    now = datetime.datetime.now(datetime.timezone.utc)
    when = (now - datetime.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    later = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    events = []
    for variant, converted in (("control", 30), ("one-page", 90)):
        for index in range(150):
            unit = f"{variant}-{index}"
            events.append({"id": f"x-{unit}", "type": "exposure", "time": when, "unit": unit,
                           "experiment": "checkout-button", "variant": variant, "templateVersion": "1"})
            if index < converted:
                events.append({"id": f"c-{unit}", "type": "metric", "time": later, "unit": unit,
                               "name": "checkout_completed"})
                events.append({"id": f"r-{unit}", "type": "metric", "time": later, "unit": unit,
                               "name": "revenue", "value": 20 + index % 7})
    status, body, _ = server.api(
        "POST", "/v1/projects/demo/environments/production/events", {"events": events}, key=server.client_key
    )
    assert status == 200 and body["rejected"] == [], body


def test_start_read_and_stop_an_experiment(admin, server):
    page = admin
    status, body, _ = server.api("POST", "/v1/projects/demo/environments/production/experiments", DEFINITION)
    assert status == 201, body

    # From the environment's tabs to the experiment, a draft.
    page.goto(server.url + "/projects/demo/environments/production/flags")
    page.get_by_role("link", name="Experiments").click()
    expect(page.get_by_role("heading", name="Experiments", exact=True)).to_be_visible()
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name="checkout-button"))
    expect(row).to_contain_text("draft")
    check_page(page, "experiments")
    page.get_by_role("link", name="checkout-button").click()
    expect(page.get_by_text("no results yet")).to_be_visible()

    page.get_by_role("button", name="Start the experiment").click()
    expect(page.get_by_role("status")).to_contain_text("Started")
    expect(page.get_by_role("button", name="Stop the experiment")).to_be_visible()

    send_population(server)
    page.reload()
    expect(page.get_by_text("Every check passes.")).to_be_visible()
    chart = page.get_by_role("img", name=re.compile("checkout_completed: difference in conversion rate"))
    expect(chart).to_be_visible()
    primary = page.locator("section.metric").first
    expect(primary.get_by_role("row").filter(has_text="one-page")).to_contain_text("+40.0 pp")
    expect(primary.locator("g.chart-up")).to_have_count(1)
    check_page(page, "experiment-results")

    page.get_by_role("button", name="Stop the experiment").click()
    expect(page.get_by_role("status")).to_contain_text("Stopped")
    expect(page.locator("h1")).to_contain_text("stopped")
    expect(page.get_by_role("button", name="Start the experiment")).to_have_count(0)

"""The experiment pages in a real browser (issues #15 and #33): find the Experiments tab, create the
experiment with the form (a targeting condition is not offered, a missing metric is explained),
start it after the confirmation, read the results (no data yet, then the health checks, the chart,
the expected loss and how long to a decision), stop it after the confirmation that says it cannot
be undone; axe-core and screenshots at phone and desktop widths."""

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


def test_create_start_read_and_stop_an_experiment(admin, server):
    page = admin

    # From the environment's tabs to the experiments, and the form.
    page.goto(server.url + "/projects/demo/environments/production/flags")
    page.get_by_role("link", name="Experiments").click()
    expect(page.get_by_role("heading", name="Experiments", exact=True)).to_be_visible()
    page.get_by_role("link", name="New experiment").click()
    expect(page.get_by_role("heading", name="New experiment", exact=True)).to_be_visible()

    page.get_by_label("Key").fill("checkout-button")
    page.get_by_label("Hypothesis").fill(DEFINITION["hypothesis"])
    page.get_by_role("checkbox", name="checkout_variant").check()
    control = page.get_by_role("group", name="Variant 1 (control)")
    expect(control.get_by_label("Name")).to_have_value("control")
    treatment = page.get_by_role("group", name="Variant 2")
    treatment.get_by_label("Name").fill("one-page")
    conditions = treatment.get_by_label("Condition")
    # Only random splits are offered: the country-targeted germany_austria is not.
    expect(conditions.locator("option", has_text="germany_austria")).to_have_count(0)
    conditions.select_option("checkout_test_b")
    page.get_by_role("radio", name=re.compile("^Bayesian")).check()
    check_page(page, "experiment-new")

    # Without a primary metric, the page says what is missing, where, and keeps what was typed.
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("button", name="Create the draft").click()
    problems = page.get_by_role("alert")
    expect(problems).to_contain_text("The experiment was not created: 1 problem.")
    expect(problems).to_contain_text("primaryMetric: required: the metric the experiment is decided on")
    expect(page.get_by_label("Key")).to_have_value("checkout-button")
    primary = page.get_by_role("group", name="Primary metric (decides the experiment)")
    primary.get_by_label("Event", exact=True).fill("checkout_completed")
    guardrail = page.get_by_role("group", name="Guardrail metric 1 (optional)")
    guardrail.get_by_label("Event", exact=True).fill("revenue")
    guardrail.get_by_label("Kind").select_option("mean")
    page.get_by_role("button", name="Create the draft").click()
    expect(page.get_by_role("status")).to_contain_text("Created as a draft")
    expect(page.locator("h1")).to_contain_text("draft")
    expect(page.get_by_text("No data yet: the experiment has not started")).to_be_visible()
    expect(page.get_by_text("Every check passes.")).to_have_count(0)

    # Start asks first, and says what cannot change afterwards.
    page.get_by_role("link", name="Start the experiment…").click()
    expect(page.get_by_role("heading", name="Start checkout-button?")).to_be_visible()
    expect(page.get_by_text("cannot change after the start")).to_be_visible()
    check_page(page, "experiment-start")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("button", name="Start the experiment").click()
    expect(page.get_by_role("status")).to_contain_text("Started")
    expect(page.get_by_text("No data yet: no unit has been exposed since the start")).to_be_visible()

    send_population(server)
    page.reload()
    expect(page.get_by_text("Every check passes.")).to_be_visible()
    chart = page.get_by_role("img", name=re.compile("checkout_completed: difference in conversion rate"))
    expect(chart).to_be_visible()
    primary = page.locator("section.metric").first
    expect(primary.get_by_role("row").filter(has_text="one-page")).to_contain_text("+40.0 pp")
    expect(primary.get_by_role("columnheader", name="Expected loss")).to_be_visible()
    expect(primary.get_by_role("heading", name="How long to a decision")).to_be_visible()
    expect(primary.locator("svg.chart:visible g.chart-up")).to_have_count(1)
    # The chart takes the card's width.
    card = primary.bounding_box()
    drawn = chart.bounding_box()
    assert drawn["width"] > card["width"] * 0.8, (drawn, card)
    check_page(page, "experiment-results")
    # On a phone, the narrow drawing, across the card.
    page.set_viewport_size({"width": 375, "height": 900})
    expect(chart).to_be_visible()
    assert chart.bounding_box()["width"] > 280, chart.bounding_box()
    expect(page.locator("svg.chart-small")).to_have_count(2)

    # Stop asks first and says it cannot be undone.
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("link", name="Stop the experiment…").click()
    expect(page.get_by_role("heading", name="Stop checkout-button for good?")).to_be_visible()
    expect(page.get_by_text("This cannot be undone")).to_be_visible()
    check_page(page, "experiment-stop")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("button", name="Stop the experiment for good").click()
    expect(page.get_by_role("status")).to_contain_text("Stopped")
    expect(page.locator("h1")).to_contain_text("stopped")
    expect(page.get_by_role("link", name="Start the experiment…")).to_have_count(0)
    expect(page.get_by_role("link", name="Stop the experiment…")).to_have_count(0)

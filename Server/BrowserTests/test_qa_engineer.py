"""The QA engineer's task: check what one test user gets in staging — every condition's state and
percent bucket —, save that user as edited, and flip a staging kill switch; staging looks
different from production."""

import hashlib
import re

import pytest
from conftest import check_page, person, shop, signed_in_page
from playwright.sync_api import expect

PROJECT = "qa-shop"
STAGING = f"/projects/{PROJECT}/environments/staging"
PRODUCTION = f"/projects/{PROJECT}/environments/production"


@pytest.fixture(scope="module")
def qa(server, browser):
    template = shop(server, PROJECT, {"production": "red", "staging": "yellow"})
    # banner_text also has a value for new app versions: a German 2.1 user matches both, and
    # germany_austria (first) shadows the other.
    template["parameters"]["banner_text"]["conditionalValues"]["new_app_versions"] = {"value": "New!"}
    status, body, _ = server.api(
        "PUT", f"/v1/projects/{PROJECT}/environments/staging/template", template, headers={"If-Match": "*"}
    )
    assert status == 200, body
    context, page = signed_in_page(browser, server, person(server, "Quinn", "editor", [f"{PROJECT}/staging"]))
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, errors


def bucket(seed: str, user: str) -> float:
    """The user's percent bucket as Vane computes it (SHA-256 of `seed.id`, modulo 10^8), in %."""
    digest = hashlib.sha256(f"{seed}.{user}".encode()).digest()
    return int.from_bytes(digest, "big") % 100_000_000 / 1_000_000


def row(page, key):
    return page.locator("#evaluate-rows tr").filter(has=page.get_by_role("link", name=key, exact=True))


def test_the_qa_engineer_checks_one_user_saves_them_and_flips_a_staging_kill_switch(qa, server):
    page = qa
    page.goto(server.url + STAGING + "/flags")
    page.get_by_role("link", name="Who gets what").click()
    page.get_by_label("Randomization id").fill("qa-user-1")
    page.get_by_label("Country").fill("DE")
    page.get_by_label("App version").fill("2.1.0")
    page.get_by_role("button", name="Show values").click()

    # Every condition of each flag, with its state for this user.
    banner = row(page, "banner_text")
    expect(banner).to_contain_text("Willkommen bei Vane!")
    conditions = banner.get_by_role("listitem")
    expect(conditions.filter(has_text=re.compile(r"^germany_austria"))).to_contain_text("Matched")
    expect(conditions.filter(has_text=re.compile(r"^new_app_versions"))).to_contain_text("Shadowed")
    expect(conditions.filter(has_text=re.compile(r"^new_app_versions"))).to_contain_text("germany_austria comes first")
    # The percent bucket, as the SDKs compute it.
    share = bucket("checkout_test", "qa-user-1")
    in_test = share > 50
    checkout = row(page, "checkout_variant")
    expect(checkout).to_contain_text(f"bucket {share:.6f} % (seed checkout_test)")
    expect(checkout.get_by_role("listitem")).to_contain_text("Matched" if in_test else "Not matched")
    expect(checkout.locator("code.value")).to_have_text("one_page" if in_test else "control")
    # Flag keys lead to their editors.
    expect(banner.get_by_role("link", name="banner_text")).to_have_attribute(
        "href", STAGING + "/flags/banner_text/edit"
    )
    check_page(page, "qa-who-gets-what")

    # Edit the country and save without showing values again: the saved context is the edited one.
    page.get_by_label("Country").fill("AT")
    page.get_by_label("Save this context as").fill("Austrian tester")
    page.get_by_role("button", name="Save context").click()
    expect(page.get_by_role("status").filter(has_text="Saved the context")).to_be_visible()
    page.goto(server.url + STAGING + "/evaluate")
    page.get_by_label("Saved context", exact=True).select_option("Austrian tester")
    page.get_by_role("button", name="Use this context").click()
    expect(page.get_by_label("Country")).to_have_value("AT")
    expect(page.get_by_label("App version")).to_have_value("2.1.0")

    # The staging kill switch.
    page.get_by_role("link", name="Flags", exact=True).click()
    page.get_by_role("row", name=re.compile("payments_enabled")).get_by_role(
        "link", name="Turn off payments_enabled"
    ).click()
    page.get_by_label("Why?").fill("Testing the outage screen")
    page.get_by_role("button", name="Turn off and publish").click()
    expect(page.get_by_role("status")).to_contain_text("Published version")
    expect(page.get_by_role("row", name=re.compile("payments_enabled"))).to_contain_text("Off")
    status, body, _ = server.api("GET", f"/v1/projects/{PROJECT}/environments/production/template")
    assert body["parameters"]["payments_enabled"]["defaultValue"]["value"] == "true", "production untouched"
    check_page(page, "qa-staging-flags")

    # Staging and production never look the same: each has its colour in the bars.
    staging_name = page.get_by_role("navigation", name="Environment").locator(".environment-name")
    expect(staging_name).to_have_text("Staging")
    staging_colour = staging_name.evaluate("e => getComputedStyle(e).backgroundColor")
    page.goto(server.url + PRODUCTION + "/flags")
    production_name = page.get_by_role("navigation", name="Environment").locator(".environment-name")
    expect(production_name).to_have_text("Production")
    production_colour = production_name.evaluate("e => getComputedStyle(e).backgroundColor")
    assert staging_colour != production_colour, (staging_colour, production_colour)
    assert "rgba(0, 0, 0, 0)" not in (staging_colour, production_colour)
    check_page(page, "qa-production-flags")

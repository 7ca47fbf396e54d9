"""The "Who gets what" page in a real browser: save a context, pick it from the saved ones, see
each key's value and why, compare with another environment."""

import re

import pytest
from conftest import check_page
from playwright.sync_api import expect

EVALUATE = "/projects/demo/environments/production/evaluate"
SAVED_NAME = "German iOS user on 2.1"
CONTEXT = {"randomizationId": "user-42", "device.country": "DE", "device.os": "ios", "app.version": "2.1.0", "plan": "pro"}


# The admin chooses their own password first when this file runs without test_console.py.
pytestmark = pytest.mark.usefixtures("own_admin_password")


def publish_staging_banner(server, german_banner: str):
    """Staging's German banner differs from production's; everything else is production's."""
    status, template, _ = server.api("GET", "/v1/projects/demo/environments/production/template")
    assert status == 200, template
    template.pop("version", None)
    template["parameters"]["banner_text"]["conditionalValues"]["germany_austria"]["value"] = german_banner
    status, body, _ = server.api(
        "PUT", "/v1/projects/demo/environments/staging/template", template, headers={"If-Match": "*"}
    )
    assert status == 200, body


def row(page, key):
    return page.locator("#evaluate-rows tr").filter(has=page.get_by_text(key, exact=True))


def test_saved_context_values_explanations_and_comparison(admin, server):
    page = admin
    publish_staging_banner(server, "Hallo aus Staging!")
    expected = server.fetch(CONTEXT)

    # The tab, an empty context: what everyone else gets.
    page.goto(server.url + "/projects/demo/environments/production/flags")
    page.get_by_role("link", name="Who gets what").click()
    expect(page.get_by_role("heading", name=re.compile("Who gets what"))).to_be_visible()

    # Type a context, see its values, save it under a name.
    page.get_by_label("Randomization id").fill("user-42")
    page.get_by_label("Country").fill("DE")
    page.get_by_label("Platform").fill("ios")
    page.get_by_label("App version").fill("2.1.0")
    page.get_by_label("Custom signals").fill("plan=pro")
    page.get_by_role("button", name="Show values").click()
    expect(row(page, "banner_text")).to_contain_text(expected["banner_text"])
    page.get_by_label("Save this context as").fill(SAVED_NAME)
    page.get_by_role("button", name="Save context").click()
    expect(page.get_by_role("status").filter(has_text="Saved the context")).to_be_visible()

    # Start again and pick the saved context.
    page.goto(server.url + EVALUATE)
    expect(page.get_by_label("Country")).to_have_value("")
    page.get_by_label("Saved context", exact=True).select_option(SAVED_NAME)
    page.get_by_role("button", name="Use this context").click()
    expect(page.get_by_label("Country")).to_have_value("DE")
    expect(page.get_by_label("Custom signals")).to_have_value("plan=pro")
    for key, value in expected.items():
        expect(row(page, key).locator("code.value")).to_have_text(value)
    banner = row(page, "banner_text")
    expect(banner).to_contain_text("conditional")
    expect(banner).to_contain_text("conditionalValue")
    expect(banner).to_contain_text("germany_austria")
    expect(banner).to_contain_text("device.country in ['de', 'at']")
    expect(row(page, "payments_enabled")).to_contain_text("defaultValue")

    # Compare with staging: only the banner differs, marked in words.
    page.get_by_label("Compare with").select_option("environment:staging")
    page.get_by_role("button", name="Show values").click()
    expect(page.locator("#evaluate-count")).to_contain_text("1 differ.")
    expect(page.locator("#evaluate-rows tr[data-differs=yes]")).to_have_count(1)
    expect(banner).to_contain_text("Differs")
    expect(banner).to_contain_text("Hallo aus Staging!")
    expect(row(page, "checkout_variant")).to_contain_text("Same")
    # Live filters: only differences, and text.
    page.get_by_label("Only differences").check()
    expect(page.locator("#evaluate-rows tr:not([hidden])")).to_have_count(1)
    expect(page.locator("#evaluate-count")).to_have_text(re.compile(r"Showing 1 of \d+ keys\. 1 differ\."))
    page.get_by_label("Only differences").uncheck()
    page.get_by_role("searchbox", name="Filter").fill("checkout")
    expect(page.locator("#evaluate-rows tr:not([hidden])")).to_have_count(1)
    page.get_by_role("searchbox", name="Filter").fill("")
    check_page(page, "evaluate")


def test_bad_input_is_shown_at_the_field(admin, server):
    page = admin
    page.goto(server.url + EVALUATE)
    page.get_by_label("App version").fill("2.x")
    page.get_by_label("Custom signals").fill("beta=[1,")
    page.get_by_role("button", name="Show values").click()
    expect(page.locator("#context-version-error")).to_contain_text("expected a version such as 2.1.0")
    expect(page.locator("#context-signals-error")).to_contain_text("not valid JSON")
    expect(page.get_by_label("App version")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#evaluate-rows")).to_have_count(0)
    check_page(page, "evaluate-errors")

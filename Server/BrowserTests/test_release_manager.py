"""The release manager's task: read the audit log filtered by a flag key, follow an entry to its
diff and see the kill switch's reason; copy a flag from staging to production with its diff and
impact sample."""

import re

import pytest
from conftest import check_page, person, shop, signed_in_page
from playwright.sync_api import expect

PROJECT = "release-shop"
STAGING = f"/projects/{PROJECT}/environments/staging"
PRODUCTION = f"/projects/{PROJECT}/environments/production"


@pytest.fixture(scope="module")
def release_manager(server, browser):
    template = shop(server, PROJECT, {"production": "red", "staging": "teal"})
    # Staging's banner changed, and its kill switch thrown with a reason.
    template["parameters"]["banner_text"]["defaultValue"]["value"] = "Spring sale!"
    status, body, _ = server.api(
        "PUT", f"/v1/projects/{PROJECT}/environments/staging/template", template, headers={"If-Match": "*"}
    )
    assert status == 200, body
    status, body, _ = server.api(
        "POST",
        f"/v1/projects/{PROJECT}/environments/staging/flags/payments_enabled/switch",
        {"to": "off", "message": "payment provider outage, incident 4711"},
    )
    assert status == 200, body
    who = person(server, "Robin", "editor", [f"{PROJECT}/staging", f"{PROJECT}/production"])
    context, page = signed_in_page(browser, server, who)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, errors


def test_the_audit_log_filtered_by_a_flag_tells_the_story(release_manager, server):
    page = release_manager
    page.goto(server.url + "/")
    page.get_by_role("link", name="Audit log").click()
    page.get_by_label("Flag key").fill("payments_enabled")
    page.get_by_label("Environment").select_option(f"{PROJECT}/staging")
    page.get_by_role("button", name="Apply").click()

    entries = page.get_by_role("table").get_by_role("row")
    # The header, the kill switch, and the first publish that created the flag.
    expect(entries).to_have_count(3)
    kill = entries.filter(has_text="Kill switch")
    expect(kill).to_contain_text("payment provider outage, incident 4711")
    expect(kill.get_by_role("link", name="payments_enabled")).to_have_attribute(
        "href", STAGING + "/flags/payments_enabled/edit"
    )
    # The banner's publish (version 2) changed no payments_enabled: it is not listed.
    expect(page.get_by_role("table")).not_to_contain_text("published version 2")
    check_page(page, "release-audit-log")

    kill.get_by_role("link", name="Diff").click()
    expect(page.get_by_role("heading", name=re.compile("payments_enabled"))).to_be_visible()
    expect(page).to_have_url(re.compile(r"/diff\?from=\d+&to=\d+$"))


def test_a_flag_is_copied_from_staging_to_production_with_its_diff_and_sample(release_manager, server):
    page = release_manager
    page.goto(server.url + STAGING + "/flags")
    page.get_by_role("link", name="Copy banner_text to another environment").click()
    page.get_by_label("Copy to").select_option("production")
    page.get_by_role("button", name="Show what changes").click()

    expect(page.get_by_role("heading", name=re.compile("Copy banner_text from Staging to Production"))).to_be_visible()
    expect(page.get_by_role("main")).to_contain_text("Spring sale!")
    sample = page.get_by_role("table", name=re.compile("Sampled users"))
    expect(sample.get_by_role("row", name=re.compile("banner_text"))).to_contain_text(re.compile(r"\d+ of \d+"))
    check_page(page, "release-copy-flag")

    page.get_by_role("button", name="Copy into my draft of Production").click()
    expect(page).to_have_url(server.url + PRODUCTION + "/review")
    expect(page.get_by_role("main")).to_contain_text("Spring sale!")
    # Only a draft: production still serves the old banner.
    status, body, _ = server.api("GET", f"/v1/projects/{PROJECT}/environments/production/template")
    assert body["parameters"]["banner_text"]["defaultValue"]["value"] == "Welcome to Vane!"

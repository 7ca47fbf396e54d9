"""The conditions page in a real browser: live syntax checking as one types, reordering by keyboard
and by drag and drop, and the rule builder. An editor of demo/staging of its own (created through
the API) does the work, so the tests need no other file's state and changes stay in their draft."""

import re
import uuid

import pytest
from conftest import change_password, check_page, sign_in
from playwright.sync_api import expect

STAGING = "/projects/demo/environments/staging"
PASSWORD = "conditions editor password 7"


@pytest.fixture(scope="module")
def editor_account(server):
    email = f"conditions-{uuid.uuid4().hex[:8]}@example.com"
    status, body, _ = server.api(
        "POST", "/v1/users", {"email": email, "role": "editor", "environments": ["demo/staging"]}
    )
    assert status == 201, body
    return {"email": email, "password": body["oneTimePassword"], "changed": False}


@pytest.fixture
def editor(page, server, editor_account):
    """A page signed in as the module's editor (choosing a password the first time)."""
    if not editor_account["changed"]:
        sign_in(page, server, editor_account["email"], editor_account["password"])
        expect(page).to_have_url(server.url + "/account")
        change_password(page, editor_account["password"], PASSWORD)
        expect(page.get_by_role("status")).to_contain_text("Your password is changed")
        editor_account.update(password=PASSWORD, changed=True)
    else:
        sign_in(page, server, editor_account["email"], PASSWORD)
        page.wait_for_url(server.url + "/")
    return page


def listed(page):
    return page.locator("#condition-rows tr").evaluate_all("rows => rows.map(row => row.dataset.condition)")


def live_names(server):
    status, body, _ = server.api("GET", "/v1/projects/demo/environments/staging/template")
    assert status == 200, body
    return [condition["name"] for condition in body["conditions"]]


def test_a_bad_expression_shows_the_message_and_marks_the_column_as_one_types(editor, server):
    page = editor
    page.goto(server.url + STAGING + "/conditions")
    expect(page.get_by_role("heading", name=re.compile("Conditions"))).to_be_visible()
    expect(page.get_by_role("row", name=re.compile("germany_austria"))).to_contain_text("banner_text")
    check_page(page, "conditions")

    page.get_by_role("link", name="New condition").click()
    page.get_by_label("Name", exact=True).fill("ios_users")
    expression = page.get_by_label("Expression", exact=True)
    message = page.locator("#expression-message")
    expect(message).to_have_attribute("aria-live", "polite")
    expression.press_sequentially("device.os == ios", delay=20)
    expect(message).to_contain_text("column 14: expected a string in single quotes")
    expect(page.locator("#expression-where mark")).to_have_text("ios")
    expect(expression).to_have_attribute("aria-invalid", "true")
    check_page(page, "condition-edit")

    expression.fill("device.os == 'ios'")
    expect(message).to_have_text("No syntax problem.")
    expect(page.locator("#expression-where")).to_be_hidden()
    page.get_by_role("button", name="Save to draft").click()
    expect(page.get_by_role("status").filter(has_text="Saved the condition")).to_contain_text("ios_users")
    assert "ios_users" in listed(page)
    assert "ios_users" not in live_names(server)


def test_reorder_with_the_keyboard_and_by_dragging(editor, server):
    page = editor
    page.goto(server.url + STAGING + "/conditions")
    start = listed(page)
    assert start[:3] == ["germany_austria", "new_app_versions", "checkout_test_b"], start

    # Keyboard: focus a Down button and press Enter (plain forms, no script needed).
    page.get_by_role("button", name="Move germany_austria down").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_text("Moved germany_austria to position 2 in your draft.")).to_be_visible()
    assert listed(page)[:3] == ["new_app_versions", "germany_austria", "checkout_test_b"]
    page.get_by_role("button", name="Move checkout_test_b up").press("Enter")
    expect(page.get_by_text("Moved checkout_test_b to position 2 in your draft.")).to_be_visible()
    assert listed(page)[:3] == ["new_app_versions", "checkout_test_b", "germany_austria"]

    # Drag and drop by the handle, which has an accessible name.
    handle = page.get_by_role("button", name="Drag to reorder germany_austria")
    expect(handle).to_be_visible()
    handle.drag_to(page.locator('tr[data-condition="new_app_versions"]'))
    expect(page.get_by_text("Saved the new order in your draft.")).to_be_visible()
    assert listed(page)[:3] == ["germany_austria", "new_app_versions", "checkout_test_b"]
    assert listed(page)[3:] == start[3:]

    # Only the draft changed.
    assert live_names(server) == ["germany_austria", "new_app_versions", "checkout_test_b"]


def test_the_rule_builder_writes_the_expression(editor, server):
    page = editor
    page.goto(server.url + STAGING + "/conditions/new")
    page.get_by_label("Name", exact=True).fill("dach_half")
    country = page.get_by_role("group", name="Country")
    country.get_by_label("Country codes, separated by commas").fill("DE, AT, CH")
    country.get_by_role("button", name="Add to expression").click()
    expression = page.get_by_label("Expression", exact=True)
    expect(expression).to_have_value("device.country in ['DE', 'AT', 'CH']")

    percent = page.get_by_role("group", name="Percent of users")
    percent.get_by_label("Seed").fill("dach")
    percent.get_by_label("From percent").fill("0")
    percent.get_by_label("To percent").fill("50")
    percent.get_by_role("button", name="Add to expression").click()
    expect(expression).to_have_value("device.country in ['DE', 'AT', 'CH'] && percent('dach') between 0 and 50")
    expect(page.locator("#expression-message")).to_have_text("No syntax problem.")
    expect(page.locator("#rule-status")).to_contain_text("Added percent('dach') between 0 and 50")

    # A value the builder cannot use says why and leaves the expression alone.
    version = page.get_by_role("group", name="App version")
    version.get_by_label("Version").fill("2.x")
    version.get_by_role("button", name="Add to expression").click()
    expect(page.locator("#rule-status")).to_contain_text("a version is numbers separated by dots")
    expect(expression).to_have_value("device.country in ['DE', 'AT', 'CH'] && percent('dach') between 0 and 50")
    check_page(page, "condition-builder")

    page.get_by_label("Tag colour").select_option("Teal")
    page.get_by_role("button", name="Save to draft").click()
    row = page.get_by_role("row", name=re.compile("dach_half"))
    expect(row).to_contain_text("device.country in ['DE', 'AT', 'CH'] && percent('dach') between 0 and 50")
    expect(row).to_contain_text("Teal")

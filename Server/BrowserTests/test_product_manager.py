"""The product manager's task in a real browser (issue #33): target the banner at German users on
app 2.1 or later. The new condition lands below germany_austria, which already catches every German
user, so the flag editor and the review say the new value never decides and why nobody in the
sample changes; the product manager moves the condition above, the review then counts the users
whose value changes, and they publish. Then the release manager rolls back that one flag with a
reason. Works in demo/pm (created through the API), so no other file's state matters."""

import re
import uuid

import pytest
from conftest import change_password, check_page, sign_in
from playwright.sync_api import expect

PM = "/projects/demo/environments/pm"
PASSWORD = "banner for germany 21"
NEW_CONDITION = "device.country in ['de'] && app.version.>=(['2.1'])"


@pytest.fixture(scope="module")
def people(server):
    """demo/pm with production's template live; the product manager and the release manager."""
    status, body, _ = server.api("POST", "/v1/projects/demo/environments", {"id": "pm", "name": "PM"})
    assert status == 201, body
    status, template, _ = server.api("GET", "/v1/projects/demo/environments/production/template")
    assert status == 200, template
    template.pop("version", None)
    server.publish(template, "pm")
    found = {}
    for name in ("Priya", "Rafael"):
        email = f"{name.lower()}-{uuid.uuid4().hex[:6]}@example.com"
        status, body, _ = server.api(
            "POST", "/v1/users", {"email": email, "name": name, "role": "editor", "environments": ["demo/pm"]}
        )
        assert status == 201, body
        found[name] = {"email": email, "password": body["oneTimePassword"]}
    return found


def signed_in(browser, server, person):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, server, person["email"], person["password"])
    expect(page).to_have_url(server.url + "/account")
    change_password(page, person["password"], PASSWORD)
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    return context, page, errors


def live(server):
    status, body, _ = server.api("GET", "/v1/projects/demo/environments/pm/template")
    assert status == 200, body
    return body


def test_a_banner_for_germany_on_2_1_shadowed_moved_published_and_rolled_back(browser, server, people):
    context, page, errors = signed_in(browser, server, people["Priya"])

    # A new condition: it lands last, below germany_austria.
    page.goto(server.url + PM + "/conditions/new")
    page.get_by_label("Name", exact=True).fill("germany_app_2_1")
    page.get_by_label("Expression", exact=True).fill(NEW_CONDITION)
    page.get_by_role("button", name="Save to draft").click()
    expect(page.get_by_role("status").filter(has_text="Saved the condition")).to_contain_text("germany_app_2_1")

    # The flag editor: the condition the flag uses first, with its expression; the new one behind
    # "Add a value for another condition".
    page.goto(server.url + PM + "/flags/banner_text/edit")
    used = page.get_by_role("group", name="Priority 1: germany_austria")
    expect(used).to_contain_text("device.country in ['de', 'at']")
    expect(page.get_by_role("group", name="Everyone else")).to_be_visible()
    new_value = page.get_by_label("Value for germany_app_2_1", exact=True)
    expect(new_value).to_be_hidden()
    page.get_by_text("Add a value for another condition").click()
    page.get_by_label("Kind of value for germany_app_2_1").select_option("value")
    new_value.fill("Frühling!")
    page.get_by_role("button", name="Save to draft").click()
    expect(page.get_by_role("status").filter(has_text="Saved to your draft")).to_be_visible()

    # Saved, and shadowed: the editor says by which condition, and offers the move.
    shadows = page.get_by_role("region", name="Values that never decide")
    expect(shadows).to_contain_text(
        "banner_text's value for germany_app_2_1 never decides: germany_austria comes first"
    )
    expect(page.get_by_role("group", name="Priority 2: germany_app_2_1")).to_contain_text(NEW_CONDITION)
    check_page(page, "flag-editor-shadowed")

    # Reordering in the editor happens in place (no reload), and Save would keep it.
    url = page.url
    page.get_by_role("button", name="Move germany_app_2_1 up").click()
    expect(page.get_by_role("group", name="Priority 1: germany_app_2_1")).to_be_visible()
    expect(page.locator("input[name=condition_order]")).to_have_value("germany_app_2_1\ngermany_austria")
    assert page.url == url
    page.get_by_role("button", name="Move germany_app_2_1 down").click()
    expect(page.get_by_role("group", name="Priority 1: germany_austria")).to_be_visible()

    # The review: nobody in the sample changes, and it says why.
    page.get_by_role("link", name=re.compile("^Review")).first.click()
    sample = page.get_by_role("region", name="Who would see a different value")
    expect(sample.get_by_role("row", name=re.compile("banner_text"))).to_contain_text(
        "nobody in the sample, because germany_austria decides before germany_app_2_1"
    )
    expect(page.get_by_role("region", name="Values that never decide")).to_be_visible()
    check_page(page, "review-shadowed")

    # Move it above: a real reorder in the draft; now the review counts German users on 2.1.
    page.get_by_role("button", name="Move germany_app_2_1 above germany_austria").click()
    expect(page.get_by_role("status").filter(has_text="Moved germany_app_2_1 up")).to_be_visible()
    expect(page.get_by_role("region", name="Values that never decide")).to_have_count(0)
    row = page.get_by_role("region", name="Who would see a different value").get_by_role(
        "row", name=re.compile("banner_text")
    )
    expect(row).not_to_contain_text("nobody in the sample")
    expect(page.get_by_text("for germany_app_2_1, 'Frühling!' instead of none", exact=True)).to_be_visible()
    check_page(page, "review-moved")
    page.get_by_label("Why? (shown in the history)").fill("Spring banner for German users on 2.1")
    page.get_by_role("button", name="Publish", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Published version")).to_be_visible()
    template = live(server)
    names = [condition["name"] for condition in template["conditions"]]
    assert names.index("germany_app_2_1") < names.index("germany_austria"), names
    assert template["parameters"]["banner_text"]["conditionalValues"]["germany_app_2_1"] == {"value": "Frühling!"}
    published = template["version"]["versionNumber"]
    context.close()
    assert not errors, errors

    # The release manager rolls back that one flag, with a reason.
    context, page, errors = signed_in(browser, server, people["Rafael"])
    page.goto(server.url + PM + "/history")
    page.get_by_role("link", name=f"Roll back to version {int(published) - 1}").click()
    page.get_by_role("link", name="Roll back only banner_text").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Roll back banner_text to version")
    expect(page.get_by_text("banner_text: for germany_app_2_1, none instead of 'Frühling!'", exact=True)).to_be_visible()
    check_page(page, "rollback-flag")
    page.get_by_role("button", name="Roll back banner_text and publish").click()
    expect(page.get_by_label("Why roll back? (recorded in the history and the audit log)")).to_be_focused()
    page.get_by_label("Why roll back? (recorded in the history and the audit log)").fill("Too early for spring")
    page.get_by_role("button", name="Roll back banner_text and publish").click()
    expect(page.get_by_role("heading", name="History")).to_be_visible()
    expect(page.get_by_role("row", name=re.compile("Rollback of banner_text"))).to_contain_text("Too early for spring")
    template = live(server)
    assert "germany_app_2_1" not in template["parameters"]["banner_text"].get("conditionalValues", {})
    assert "germany_app_2_1" in [condition["name"] for condition in template["conditions"]], "other flags' order stays"
    status, audit, _ = server.api("GET", "/v1/projects/demo/environments/pm/audit")
    assert status == 200, audit
    newest = audit["entries"][0]
    assert newest["action"] == "template.rollback" and newest["details"]["reason"] == "Too early for spring", newest
    context.close()
    assert not errors, errors

"""The console end to end, as the people who run flags use it. Tests run in file order: the first
one signs the first admin in and chooses a password the later ones use."""

import re
import urllib.request

from conftest import NEW_ADMIN_PASSWORD, change_password, check_page, sign_in
from playwright.sync_api import expect


def test_first_sign_in_requires_a_new_password(page, server):
    page.goto(server.url + "/")
    # Not signed in: the sign-in page, remembering where to go next.
    expect(page).to_have_url(re.compile(r"/sign-in\?next=%2F$"))
    check_page(page, "sign-in")

    sign_in(page, server, "admin", "not the password at all")
    expect(page.get_by_role("alert")).to_contain_text("the email or the password is wrong")
    expect(page.get_by_label("Email")).to_have_value("admin")

    sign_in(page, server, "admin", server.first_password)
    expect(page).to_have_url(server.url + "/account")
    expect(page.get_by_role("alert").first).to_contain_text("Choose your own password")
    # Every other page sends a person with a one-time password back here.
    page.goto(server.url + "/keys")
    expect(page).to_have_url(server.url + "/account")

    # Too short: the browser refuses it before sending (minlength); the server refuses weak ones.
    change_password(page, server.first_password, "short")
    expect(page).to_have_url(server.url + "/account")
    change_password(page, server.first_password, "aaaaaaaaaaaaaaaa")
    expect(page.get_by_role("alert").last).to_contain_text("at least 4 different characters")
    change_password(page, server.first_password, NEW_ADMIN_PASSWORD)
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    check_page(page, "account")
    server.state["admin_password"] = NEW_ADMIN_PASSWORD

    # The one-time password is spent.
    page.get_by_role("button", name="Sign out", exact=True).click()
    expect(page).to_have_url(server.url + "/sign-in")
    sign_in(page, server, "admin", server.first_password)
    expect(page.get_by_role("alert")).to_contain_text("wrong")


def test_projects_page_shows_live_versions(admin, server):
    page = admin
    expect(page.get_by_role("heading", name="Projects")).to_be_visible()
    demo = page.get_by_role("region", name=re.compile("Demo"))
    expect(demo.get_by_role("link", name="Production")).to_be_visible()
    expect(demo.get_by_role("row", name=re.compile("Production"))).to_contain_text("vane")
    check_page(page, "projects")


def test_kill_switch_turns_a_flag_off_for_everyone_and_back_on(admin, server):
    page = admin
    assert server.fetch({"randomizationId": "u1"})["payments_enabled"] == "true"
    page.get_by_role("link", name="Production").click()
    expect(page.get_by_role("heading", name=re.compile("Flags"))).to_be_visible()
    check_page(page, "flags")
    row = page.get_by_role("row", name=re.compile("payments_enabled"))
    expect(row).to_contain_text("On")
    row.get_by_role("link", name="Turn off payments_enabled").click()

    expect(page.get_by_role("heading", name=re.compile("Turn off"))).to_be_visible()
    expect(page.get_by_role("table", name="What changes")).to_contain_text("false")
    check_page(page, "kill-switch")
    # A message is required: the browser's own validation stops an empty one.
    page.get_by_role("button", name="Turn off and publish").click()
    expect(page.get_by_role("heading", name=re.compile("Turn off"))).to_be_visible()
    page.get_by_label("Why? (shown in the history)").fill("Payments provider outage")
    page.get_by_role("button", name="Turn off and publish").click()

    expect(page.get_by_role("status")).to_contain_text("Published version 2")
    expect(page.get_by_role("row", name=re.compile("payments_enabled"))).to_contain_text("Off")
    assert server.fetch({"randomizationId": "u1"})["payments_enabled"] == "false"
    assert server.fetch({"randomizationId": "u2", "device.country": "de"})["payments_enabled"] == "false"

    page.get_by_role("row", name=re.compile("payments_enabled")).get_by_role(
        "link", name="Turn on payments_enabled"
    ).click()
    page.get_by_label("Why? (shown in the history)").fill("Provider is back")
    page.get_by_role("button", name="Turn on and publish").click()
    expect(page.get_by_role("status")).to_contain_text("Published version 3")
    assert server.fetch({"randomizationId": "u1"})["payments_enabled"] == "true"

    # The audit log names the person, not a key.
    page.get_by_role("link", name="Audit log").click()
    expect(page.get_by_role("row", name=re.compile("published version 3")).first).to_contain_text("admin")
    check_page(page, "audit")


def test_history_diff_and_rollback(admin, server):
    page = admin
    page.goto(server.url + "/projects/demo/environments/production/history")
    expect(page.get_by_role("row", name=re.compile("Provider is back"))).to_be_visible()
    check_page(page, "history")
    page.get_by_role("link", name="Changes in version 2").click()
    expect(page.get_by_role("heading", name="Version 1 → 2")).to_be_visible()
    expect(page.get_by_role("region", name=re.compile("Parameters"))).to_contain_text("payments_enabled")
    check_page(page, "diff")

    page.goto(server.url + "/projects/demo/environments/production/history")
    page.get_by_role("link", name="Roll back to version 2").click()
    expect(page.get_by_role("heading", name="Roll back to version 2?")).to_be_visible()
    # The confirmation shows what the rollback changes: payments go off again.
    expect(page.get_by_role("region", name="payments_enabled after")).to_contain_text("for everyone else: false")
    expect(page.get_by_role("region", name="payments_enabled before")).to_contain_text("for everyone else: true")
    expect(page.get_by_text("payments_enabled: for everyone else, 'false' instead of 'true'", exact=True)).to_be_visible()
    check_page(page, "rollback")
    page.get_by_label("Why roll back? (recorded in the history and the audit log)").fill("Payments fail again")
    page.get_by_role("button", name="Roll back and publish").click()
    expect(page.get_by_role("row", name=re.compile("Rollback to version 2"))).to_contain_text("4")
    assert server.fetch({"randomizationId": "u1"})["payments_enabled"] == "false"


def test_keys_secret_shown_once_and_revocation_works(admin, server):
    page = admin
    page.get_by_role("link", name="API keys").click()
    check_page(page, "keys")
    page.get_by_label("Name").fill("android-app")
    page.get_by_label("Role").select_option("client")
    page.get_by_label("Environment").select_option("demo/staging")
    page.get_by_role("button", name="Create key").click()
    secret = page.get_by_role("textbox", name="The new key").input_value()
    assert secret.startswith("vane_client_")
    status, _, _ = server.api(
        "POST", "/v1/projects/demo/environments/staging/fetch", {"context": {}}, key=secret
    )
    assert status == 200
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke android-app").click()
    expect(page.get_by_role("status")).to_contain_text("Revoked")
    status, _, _ = server.api(
        "POST", "/v1/projects/demo/environments/staging/fetch", {"context": {}}, key=secret
    )
    assert status == 401


def test_a_viewer_can_read_but_not_change(admin, browser, server):
    page = admin
    page.get_by_role("link", name="People").click()
    check_page(page, "people")
    page.get_by_label("Email").fill("viv@example.com")
    page.get_by_label("Name").fill("Viv Viewer")
    page.get_by_label("Role").select_option("viewer")
    page.get_by_role("button", name="Add").click()
    one_time = page.get_by_role("textbox", name="One-time password").input_value()
    page.get_by_role("link", name="Edit viv@example.com").click()
    check_page(page, "person")

    viewer = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    sign_in(viewer, server, "viv@example.com", one_time)
    change_password(viewer, one_time, "viewers see everything 1")
    viewer.goto(server.url + "/projects/demo/environments/production/flags")
    expect(viewer.get_by_role("row", name=re.compile("payments_enabled"))).to_be_visible()
    # No switch, no rollback, no keys or people in the navigation.
    expect(viewer.get_by_role("link", name=re.compile("^Turn (on|off)"))).to_have_count(0)
    expect(viewer.get_by_role("link", name="API keys")).to_have_count(0)
    viewer.goto(server.url + "/projects/demo/environments/production/history")
    expect(viewer.get_by_role("link", name=re.compile("Roll back"))).to_have_count(0)

    # The endpoints refuse too, even with the viewer's own valid form token.
    viewer.goto(server.url + "/account")
    token = viewer.locator("input[name=_csrf]").first.input_value()
    response = viewer.request.post(
        server.url + "/projects/demo/environments/production/flags/payments_enabled/switch",
        form={"_csrf": token, "to": "on", "version": "4", "message": "sneaky"},
    )
    assert response.status == 403
    response = viewer.request.get(server.url + "/keys")
    assert response.status == 403
    response = viewer.request.post(
        server.url + "/projects/demo/environments/production/rollback",
        form={"_csrf": token, "version": "1", "current": "4"},
    )
    assert response.status == 403
    assert server.fetch({"randomizationId": "u1"})["payments_enabled"] == "false"
    viewer.context.close()


def test_csrf_attempts_fail(admin, server):
    page = admin
    flags = "/projects/demo/environments/production/flags/payments_enabled/switch"
    # No token.
    response = page.request.post(server.url + flags, form={"to": "on", "version": "4", "message": "x"})
    assert response.status == 403
    # Another site's form, with the right token even.
    page.goto(server.url + "/account")
    token = page.locator("input[name=_csrf]").first.input_value()
    response = page.request.post(
        server.url + flags,
        form={"_csrf": token, "to": "on", "version": "4", "message": "x"},
        headers={"Origin": "https://evil.example"},
    )
    assert response.status == 403
    # A cross-site page cannot frame the console.
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert server.fetch({"randomizationId": "u1"})["payments_enabled"] == "false"


def test_flag_text_is_shown_as_text_never_run(admin, server):
    page = admin
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    status, template, headers = server.api("GET", "/v1/projects/demo/environments/staging/template")
    assert status == 200
    template["parameters"]["xss_probe"] = {
        "defaultValue": {"value": "<img src=x onerror=alert(1)>"},
        "description": "<script>alert('description')</script>",
        "valueType": "STRING",
        "vane": {"title": '"><script>alert("title")</script>', "category": "<b>bold</b>"},
    }
    status, body, _ = server.api(
        "PUT",
        "/v1/projects/demo/environments/staging/template",
        template,
        headers={"If-Match": headers["ETag"]},
    )
    assert status == 200, body
    page.goto(server.url + "/projects/demo/environments/staging/flags")
    row = page.get_by_role("row", name=re.compile("xss_probe"))
    expect(row).to_contain_text('"><script>alert("title")</script>')
    expect(row).to_contain_text("<img src=x onerror=alert(1)>")
    expect(row).to_contain_text("<b>bold</b>")
    assert page.locator("#flag-rows script, #flag-rows img, #flag-rows b").count() == 0
    page.wait_for_timeout(300)
    assert dialogs == []


def test_filtering_flags_in_the_page(admin, server):
    page = admin
    page.goto(server.url + "/projects/demo/environments/production/flags")
    page.keyboard.press("/")
    expect(page.get_by_role("searchbox", name="Filter")).to_be_focused()
    page.keyboard.type("banner")
    expect(page.locator("#flag-rows tr:not([hidden])")).to_have_count(1)
    expect(page.locator("#flag-count")).to_have_text("Showing 1 of 4.")
    # Without script the same filter is a plain GET form.
    page.goto(server.url + "/projects/demo/environments/production/flags?category=Checkout")
    expect(page.locator("#flag-rows tr")).to_have_count(1)


def test_unknown_pages_and_sign_out_everywhere(admin, server, browser):
    page = admin
    response = page.goto(server.url + "/projects/demo/environments/nowhere/flags")
    assert response.status == 404
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    check_page(page, "not-found")

    second = browser.new_context().new_page()
    sign_in(second, server, "admin", server.state["admin_password"])
    expect(second).to_have_url(server.url + "/")
    page.goto(server.url + "/account")
    expect(page.get_by_role("table")).to_contain_text("(this browser)")
    page.get_by_role("button", name="Sign out everywhere").click()
    expect(page).to_have_url(server.url + "/sign-in")
    second.goto(server.url + "/")
    expect(second).to_have_url(re.compile("/sign-in"))
    second.context.close()


def test_session_cookie_is_locked_down(page, server):
    sign_in(page, server, "admin", server.state["admin_password"])
    page.wait_for_url(server.url + "/")
    cookie = next(c for c in page.context.cookies() if c["name"] == "vane_session")
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    with urllib.request.urlopen(server.url + "/sign-in") as response:
        policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy

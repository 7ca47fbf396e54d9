"""Fixtures for the console's browser tests: a real `vane serve`, Debian's Chromium, and helpers
to sign in, scan pages with axe-core and take screenshots at phone and desktop widths."""

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "PythonSupport"))
from vane_server import Server, free_port, start_server, stop_server  # noqa: E402

SCREENSHOTS = Path(os.environ.get("VANE_SCREENSHOTS", tempfile.mkdtemp()))
NEW_ADMIN_PASSWORD = "correct horse battery staple 42"


@pytest.fixture(scope="session")
def server():
    # Loopback webhook endpoints are allowed: test_governance.py's receiver runs on 127.0.0.1.
    running = start_server(["--webhooks-allow-private-addresses"])
    yield running
    stop_server(running)


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=shutil.which("chromium"), headless=True, args=["--no-sandbox"]
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A fresh browser context (no cookies) at desktop width; fails the test on any dialog that
    page scripts did not ask for and on any script error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, f"script errors on the page: {errors}"


def sign_in(page: Page, server: Server, email: str, password: str):
    page.goto(server.url + "/sign-in")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def change_password(page: Page, current: str, new: str):
    page.get_by_label("Current password").fill(current)
    page.get_by_label("New password", exact=True).fill(new)
    page.get_by_label("New password again").fill(new)
    page.get_by_role("button", name="Change password").click()


@pytest.fixture(scope="module")
def own_admin_password(browser, server):
    """The first admin's own password, chosen once (test_console.py's first test does it through
    the pages; other files use this when they run alone)."""
    if server.state.get("admin_password"):
        return
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, server, "admin", server.first_password)
    change_password(page, server.first_password, NEW_ADMIN_PASSWORD)
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    server.state["admin_password"] = NEW_ADMIN_PASSWORD
    context.close()


@pytest.fixture
def admin(page, server):
    """A page signed in as the first admin (who changed the one-time password in the first test)."""
    assert server.state.get("admin_password"), "test_first_sign_in runs first and sets the password"
    sign_in(page, server, "admin", server.state["admin_password"])
    page.wait_for_url(server.url + "/")
    return page


def axe_check(page: Page, name: str):
    """No serious or critical axe-core violation on the page as it is now."""
    result = Axe().run(page)
    bad = [
        f"{violation['id']} ({violation['impact']}): {violation['help']} — "
        + "; ".join(node["target"][0] if node["target"] else "?" for node in violation["nodes"][:3])
        for violation in result.response["violations"]
        if violation["impact"] in ("serious", "critical")
    ]
    assert not bad, f"axe on {name}: " + " | ".join(bad)


def shoot(page: Page, name: str):
    """Screenshots at 375 px and 1280 px; at 375 px the page itself must not scroll sideways."""
    for width in (375, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        if width == 375:
            overflow = page.evaluate(
                "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            if overflow > 0:
                wide = page.evaluate(
                    """() => Array.from(document.querySelectorAll('body *'))
                        .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth)
                        .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"""
                )
                raise AssertionError(f"{name} scrolls sideways by {overflow} px at 375 px: {wide}")
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def check_page(page: Page, name: str):
    """The checks every console page gets: axe at both widths, screenshots, no sideways scroll."""
    axe_check(page, name)
    page.set_viewport_size({"width": 375, "height": 900})
    axe_check(page, name + " at 375 px")
    shoot(page, name)


PERSON_PASSWORD = "a person's own password 42"


def shop(server: Server, project: str, colours: dict) -> dict:
    """A project of its own with `staging` and `production` (the demo template live in both,
    each environment in `colours` given its colour), so a file's tests do not depend on what
    other files did to the demo project."""
    status, body, _ = server.api("POST", "/v1/projects", {"id": project, "name": project.title()})
    assert status == 201, body
    status, template, _ = server.api("GET", "/v1/projects/demo/environments/staging/template")
    assert status == 200, template
    template.pop("version", None)
    # As the demo starts, whatever other files did to it since.
    parameters = template["parameters"]
    parameters["payments_enabled"]["defaultValue"] = {"value": "true"}
    parameters["banner_text"]["defaultValue"] = {"value": "Welcome to Vane!"}
    parameters["banner_text"]["conditionalValues"] = {"germany_austria": {"value": "Willkommen bei Vane!"}}
    for environment in ("staging", "production"):
        status, body, _ = server.api(
            "POST", f"/v1/projects/{project}/environments", {"id": environment, "name": environment.title()}
        )
        assert status == 201, body
        status, body, _ = server.api(
            "PUT", f"/v1/projects/{project}/environments/{environment}/template", template, headers={"If-Match": "*"}
        )
        assert status == 200, body
        if environment in colours:
            status, body, _ = server.api(
                "PATCH", f"/v1/projects/{project}/environments/{environment}", {"colour": colours[environment]}
            )
            assert status == 200, body
    return template


def person(server: Server, name: str, role: str, grants: list) -> dict:
    """A new person (email, one-time password) made through the API."""
    import uuid

    email = f"{name.lower()}-{uuid.uuid4().hex[:6]}@example.com"
    status, body, _ = server.api("POST", "/v1/users", {"email": email, "name": name, "role": role, "environments": grants})
    assert status == 201, body
    return {"email": email, "password": body["oneTimePassword"]}


def signed_in_page(browser, server: Server, who: dict):
    """A fresh desktop-width page signed in as `who`, who chooses their own password first."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sign_in(page, server, who["email"], who["password"])
    expect(page).to_have_url(server.url + "/account")
    change_password(page, who["password"], PERSON_PASSWORD)
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    return context, page

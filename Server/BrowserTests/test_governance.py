"""Change requests and webhooks in a real browser (issue #29): under a change policy a release
manager's draft becomes a change request instead of a publish, a second person approves it, the
release manager applies it, and the project's webhook endpoint — created on the webhooks page,
its secret shown once — receives the request's life and the publish. The work happens in an
environment of its own (demo/release, created through the API), so no other file's state
matters and the policy changes nothing they use."""

import http.server
import re
import threading
import time
import uuid

import pytest
from conftest import change_password, check_page, sign_in
from playwright.sync_api import expect

RELEASE = "/projects/demo/environments/release"
PASSWORD = "governance people password 5"


class _Receiver(http.server.BaseHTTPRequestHandler):
    """A webhook receiver on loopback: answers 204 and keeps each event's type."""

    received: list = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode()
        match = re.search(r'"type"\s*:\s*"([^"]+)"', body)
        _Receiver.received.append(match.group(1) if match else "?")
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def receiver():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/vane"
    server.shutdown()


@pytest.fixture(scope="module")
def release(server):
    """demo/release with production's template live and a policy of one approval; its people."""
    status, body, _ = server.api("POST", "/v1/projects/demo/environments", {"id": "release", "name": "Release"})
    assert status == 201, body
    status, template, _ = server.api("GET", "/v1/projects/demo/environments/production/template")
    assert status == 200, template
    template.pop("version", None)
    server.publish(template, "release")
    status, body, _ = server.api(
        "PUT", "/v1/projects/demo/environments/release/change-policy", {"required": True, "approvals": 1}
    )
    assert status == 200, body
    people = {}
    for name, role, grants in (
        ("Riley", "editor", ["demo/release"]),
        ("Sam", "editor", ["demo/release"]),
        ("Alex", "admin", []),
    ):
        email = f"{name.lower()}-{uuid.uuid4().hex[:6]}@example.com"
        status, body, _ = server.api(
            "POST", "/v1/users", {"email": email, "name": name, "role": role, "environments": grants}
        )
        assert status == 201, body
        people[name] = {"email": email, "password": body["oneTimePassword"]}
    return people


def as_person(browser, server, person):
    """A fresh page signed in as `person`, choosing their own password the first time."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    if person["password"] != PASSWORD:
        sign_in(page, server, person["email"], person["password"])
        expect(page).to_have_url(server.url + "/account")
        change_password(page, person["password"], PASSWORD)
        expect(page.get_by_role("status")).to_contain_text("Your password is changed")
        person["password"] = PASSWORD
    else:
        sign_in(page, server, person["email"], PASSWORD)
        page.wait_for_url(server.url + "/")
    return page, errors


def test_an_admin_adds_a_webhook_endpoint_and_sees_its_secret_once(browser, server, release, receiver):
    page, errors = as_person(browser, server, release["Alex"])
    page.goto(server.url + "/")
    page.get_by_role("link", name=re.compile("^Webhooks of ")).first.click()
    expect(page.get_by_role("heading", name=re.compile("^Webhooks of"), level=1)).to_be_visible()
    page.get_by_label("URL").fill(receiver)
    page.get_by_label("Description (optional)").fill("Release chat")
    page.get_by_role("button", name="Add endpoint").click()
    secret = page.get_by_role("textbox", name="The signing secret").input_value()
    assert secret.startswith("whsec_")
    endpoint = page.get_by_role("region", name=receiver, exact=True)
    expect(endpoint).to_contain_text("change_request.opened")
    check_page(page, "webhooks-created")
    # Shown once: the page opened again has the endpoint and not the secret.
    page.goto(page.url)
    expect(page.get_by_role("textbox", name="The signing secret")).to_have_count(0)
    assert secret not in page.content()
    # A URL into the server's own network is refused unless the server allows it (this one does),
    # and one that is no http(s) URL always is.
    page.get_by_label("URL").fill("ftp://example.com/hook")
    page.get_by_role("button", name="Add endpoint").click()
    expect(page.get_by_role("alert")).to_contain_text("absolute http:// or https:// URL")
    assert not errors, errors
    page.context.close()


def test_a_release_manager_requests_review_another_approves_and_it_applies(browser, server, release, receiver):
    riley, riley_errors = as_person(browser, server, release["Riley"])
    sam, sam_errors = as_person(browser, server, release["Sam"])

    # Riley changes the banner in a draft; the review says why there is no Publish here.
    riley.goto(server.url + RELEASE + "/flags/banner_text/edit")
    riley.get_by_label("Value for everyone else", exact=True).fill("Release 2.0 is here")
    riley.get_by_role("button", name="Save to draft").click()
    riley.goto(server.url + RELEASE + "/review")
    policy = riley.get_by_role("region", name="Change policy")
    expect(policy).to_contain_text("1 approval each")
    expect(policy).to_contain_text("Authors may not approve their own requests")
    expect(riley.get_by_role("button", name="Publish")).to_have_count(0)
    check_page(riley, "review-request")
    riley.get_by_label("Title (what the change does)").fill("Banner for release 2.0")
    riley.get_by_label("Description (optional: why, and what reviewers should check)").fill(
        "Goes out with the 2.0 launch."
    )
    riley.get_by_role("button", name="Request review").click()

    # Its review page: the diff that will apply; Riley cannot approve their own request.
    expect(riley.get_by_role("status")).to_contain_text("Change request opened")
    expect(riley.get_by_role("heading", name=re.compile("Banner for release 2.0"), level=1)).to_contain_text(
        "In review"
    )
    expect(riley.get_by_role("region", name=re.compile("What applying it changes"))).to_contain_text(
        "Release 2.0 is here"
    )
    expect(riley.get_by_role("button", name="Approve")).to_have_count(0)
    expect(riley.get_by_text("Authors may not approve or reject their own change requests")).to_be_visible()
    status, template, _ = server.api("GET", "/v1/projects/demo/environments/release/template")
    assert template["parameters"]["banner_text"]["defaultValue"]["value"] != "Release 2.0 is here"
    request_url = riley.url.split("?")[0]

    # Sam finds it among the requests waiting for them and approves it with a comment.
    sam.goto(server.url + RELEASE + "/flags")
    sam.get_by_role("link", name="Change requests").click()
    sam.get_by_role("link", name="Mine to review").click()
    row = sam.get_by_role("row", name=re.compile("Banner for release 2.0"))
    expect(row).to_contain_text(release["Riley"]["email"])
    expect(row).to_contain_text("0/1")
    check_page(sam, "change-requests")
    row.get_by_role("link", name="Banner for release 2.0").click()
    expect(sam.get_by_role("region", name="Who would see a different value")).to_contain_text("banner_text")
    check_page(sam, "change-request-review")
    sam.get_by_label("Comment").fill("Copy checked with marketing.")
    sam.get_by_role("button", name="Approve").click()
    expect(sam.get_by_role("status")).to_contain_text("Your approval is recorded")
    expect(sam.get_by_role("heading", level=1)).to_contain_text("Approved")
    expect(sam.get_by_role("region", name="Reviews")).to_contain_text("Copy checked with marketing.")

    # Riley applies it: the version goes live, and the page says which.
    riley.goto(request_url)
    riley.get_by_role("button", name="Apply").click()
    expect(riley.get_by_role("status")).to_contain_text(re.compile(r"Applied: version \d+ is live"))
    expect(riley.get_by_role("heading", level=1)).to_contain_text("Applied")
    check_page(riley, "change-request-applied")
    status, template, _ = server.api("GET", "/v1/projects/demo/environments/release/template")
    assert template["parameters"]["banner_text"]["defaultValue"]["value"] == "Release 2.0 is here"
    riley.get_by_role("link", name="Change requests").first.click()
    riley.get_by_role("navigation", name="Change requests").get_by_role("link", name="History").click()
    expect(riley.get_by_role("row", name=re.compile("Banner for release 2.0"))).to_contain_text("Applied")
    assert not riley_errors and not sam_errors, riley_errors + sam_errors
    riley.context.close()
    sam.context.close()


def test_the_webhooks_page_shows_the_deliveries(browser, server, release, receiver):
    # The endpoint heard the request's life and the publish (the sender retries for 3 days;
    # here the receiver answers at once).
    deadline = time.monotonic() + 30
    expected = {"change_request.opened", "change_request.approved", "change_request.applied", "version.published"}
    while not expected <= set(_Receiver.received) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert expected <= set(_Receiver.received), _Receiver.received
    page, errors = as_person(browser, server, release["Alex"])
    page.goto(server.url + "/projects/demo/webhooks")
    endpoint = page.get_by_role("region", name=receiver, exact=True)
    published = endpoint.get_by_role("row", name=re.compile("version.published"))
    expect(published.first).to_contain_text("delivered")
    expect(published.first).to_contain_text("HTTP 204")
    check_page(page, "webhooks")
    page.once("dialog", lambda dialog: dialog.accept())
    endpoint.get_by_role("button", name=re.compile("^Rotate the secret")).click()
    expect(page.get_by_role("textbox", name="The signing secret")).to_have_value(re.compile("^whsec_"))
    expect(page.get_by_text("The old secret keeps signing beside it for 24 hours")).to_be_visible()
    assert not errors, errors
    page.context.close()

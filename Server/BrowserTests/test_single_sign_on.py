"""Single sign-on in a real browser: `oidc-provider-mock` (PyPI), started here on loopback, for
a good sign-in through the provider's own page and the refusals it can produce; a small fake
issuer in this file for the refusals no honest provider produces (a wrong audience or issuer,
an expired token, a bad signature, a replayed token, a code whose PKCE verifier does not match);
and a server whose provider is down. Every refusal is a page saying what went wrong, and the
browser never gets a session cookie from one."""

import base64
import hashlib
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from playwright.sync_api import expect

from conftest import check_page, sign_in
from vane_server import free_port, start_server, stop_server

CLIENT_ID = "vane-console"
USERS = [
    {"sub": "ada", "email": "ada@example.com", "email_verified": True, "name": "Ada Lovelace", "groups": ["staff", "vane-editors"]},
    {"sub": "eve", "email": "eve@elsewhere.example", "email_verified": True, "name": "Eve", "groups": ["vane-editors"]},
    {"sub": "sam", "email": "sam@example.com", "email_verified": True, "name": "Sam", "groups": ["staff"]},
]


def wait_for(url: str, process: subprocess.Popen, what: str):
    """Polls `url` until it answers 200; fails the test run (never skips it) when it does not."""
    for _ in range(150):
        if process.poll() is not None:
            pytest.fail(f"{what} exited with {process.returncode}; see its output above")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    process.kill()
    pytest.fail(f"{what} did not answer {url} within 30 s")


def secret_file() -> str:
    """The client secret in a file, as the docs say to pass it (never on the command line)."""
    path = Path(tempfile.mkdtemp(prefix="vane-oidc-")) / "client-secret"
    path.write_text("a-client-secret-for-tests\n")
    return str(path)


def sso_arguments(issuer: str, port: int, *extra) -> list:
    return [
        "--oidc-issuer", issuer,
        "--oidc-client-id", CLIENT_ID,
        "--oidc-client-secret-file", secret_file(),
        "--oidc-redirect-url", f"http://127.0.0.1:{port}/sign-in/oidc/callback",
        "--oidc-provider-name", "Test IdP",
        "--oidc-allowed-domain", "example.com",
        "--oidc-groups-claim", "groups",
        "--oidc-group-role", "vane-admins=admin",
        "--oidc-group-role", "vane-editors=editor:demo/staging",
        *extra,
    ]


@pytest.fixture(scope="module")
def mock_provider():
    """oidc-provider-mock on a free loopback port, with the test's people predefined."""
    port = free_port()
    binary = Path(sys.executable).parent / "oidc-provider-mock"
    command = [str(binary), "--port", str(port), "--require-nonce", "true"]
    for user in USERS:
        command += ["--user-claims", json.dumps(user)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_for(url + "/.well-known/openid-configuration", process, "oidc-provider-mock")
    yield url
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def sso_server(mock_provider):
    """A `vane serve` that signs people in through the mock provider."""
    port = free_port()
    running = start_server(sso_arguments(mock_provider, port), port=port)
    yield running
    stop_server(running)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class FakeIssuer:
    """An OpenID provider that signs whatever ID token the test asks for (RS256), checks PKCE
    at its token endpoint, and sends the browser straight back without a page of its own."""

    def __init__(self):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.mode = "good"
        self.codes = {}
        self.last_good_token = None
        self.earlier_challenge = None
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, body, headers=()):
                data = json.dumps(body).encode() if not isinstance(body, bytes) else body
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urllib.parse.urlparse(self.path)
                if url.path == "/.well-known/openid-configuration":
                    self.answer(200, {
                        "issuer": fake.url,
                        "authorization_endpoint": fake.url + "/authorize",
                        "token_endpoint": fake.url + "/token",
                        "jwks_uri": fake.url + "/jwks",
                        "code_challenge_methods_supported": ["S256"],
                        "token_endpoint_auth_methods_supported": ["client_secret_post"],
                    })
                elif url.path == "/jwks":
                    numbers = fake.key.public_key().public_numbers()
                    self.answer(200, {"keys": [{
                        "kty": "RSA", "kid": "fake-1", "alg": "RS256", "use": "sig",
                        "n": b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
                        "e": b64url(numbers.e.to_bytes(3, "big")),
                    }]})
                elif url.path == "/authorize":
                    query = dict(urllib.parse.parse_qsl(url.query))
                    code = secrets.token_urlsafe(16)
                    challenge = query.get("code_challenge")
                    if fake.mode == "injected_code":
                        # A code issued for an earlier sign-in (bound to its PKCE challenge),
                        # sent into this one's way back, as an attacker who stole it would.
                        challenge = fake.earlier_challenge
                    fake.earlier_challenge = query.get("code_challenge")
                    fake.codes[code] = (challenge, query.get("nonce"))
                    back = query["redirect_uri"] + "?" + urllib.parse.urlencode({"code": code, "state": query["state"]})
                    self.send_response(302)
                    self.send_header("Location", back)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    self.answer(404, {"error": "not_found"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                issued = fake.codes.pop(form.get("code"), None)
                if issued is None:
                    return self.answer(400, {"error": "invalid_grant", "error_description": "unknown or used code"})
                challenge, nonce = issued
                verifier = form.get("code_verifier", "")
                if b64url(hashlib.sha256(verifier.encode()).digest()) != challenge:
                    return self.answer(400, {
                        "error": "invalid_grant",
                        "error_description": "the PKCE code_verifier is missing or does not match",
                    })
                if form.get("client_secret") != "a-client-secret-for-tests":
                    return self.answer(401, {"error": "invalid_client"})
                self.answer(200, {"access_token": "x", "token_type": "Bearer", "id_token": fake.id_token(nonce)})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def id_token(self, nonce):
        now = int(time.time())
        claims = {
            "iss": self.url, "sub": "ada", "aud": CLIENT_ID, "exp": now + 300, "iat": now, "nonce": nonce,
            "email": "ada@example.com", "email_verified": True, "name": "Ada Lovelace", "groups": ["vane-editors"],
        }
        if self.mode == "replayed_nonce" and self.last_good_token:
            return self.last_good_token
        if self.mode == "wrong_audience":
            claims["aud"] = "another-client"
        if self.mode == "wrong_issuer":
            claims["iss"] = "https://evil.example"
        if self.mode == "expired":
            claims["exp"], claims["iat"] = now - 3600, now - 7200
        header = b64url(json.dumps({"alg": "RS256", "kid": "fake-1", "typ": "JWT"}).encode())
        body = b64url(json.dumps(claims).encode())
        key = self.other_key if self.mode == "bad_signature" else self.key
        signature = key.sign(f"{header}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
        token = f"{header}.{body}.{b64url(signature)}"
        if self.mode == "good":
            self.last_good_token = token
        return token

    def close(self):
        self.server.shutdown()


@pytest.fixture(scope="module")
def fake_issuer():
    fake = FakeIssuer()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def fake_server(fake_issuer):
    """A `vane serve` on the fake issuer, with password sign-in off but for the break-glass admin."""
    port = free_port()
    running = start_server(
        sso_arguments(fake_issuer.url, port, "--no-password-sign-in", "--break-glass-email", "admin"),
        port=port,
    )
    yield running
    stop_server(running)


def session_cookies(page):
    return [cookie for cookie in page.context.cookies() if cookie["name"] == "vane_session"]


def expect_refusal(page, server, text):
    """Starts a sign-in at the button and expects the refusal page, with no session cookie."""
    page.goto(server.url + "/sign-in")
    page.get_by_role("link", name="Sign in with Test IdP").click()
    expect(page.get_by_role("heading", name="Sign-in refused")).to_be_visible()
    expect(page.locator("main")).to_contain_text(text)
    expect(page.get_by_role("link", name="Back to the sign-in page")).to_be_visible()
    assert session_cookies(page) == []


def test_a_good_sign_in_through_the_provider_lands_in_the_console_with_its_role(page, browser, sso_server):
    page.goto(sso_server.url + "/sign-in")
    check_page(page, "sign-in-sso")
    callbacks = []
    page.on("request", lambda request: callbacks.append(request.url) if "/sign-in/oidc/callback" in request.url else None)
    page.get_by_role("link", name="Sign in with Test IdP").click()
    # The provider's own page: choose the person.
    page.get_by_role("button", name="ada", exact=True).click()
    page.wait_for_url(sso_server.url + "/")
    expect(page.locator("body")).to_contain_text("ada@example.com")
    [cookie] = session_cookies(page)
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"

    status, body, _ = sso_server.api("GET", "/v1/users")
    assert status == 200
    [ada] = [user for user in body["users"] if user["email"] == "ada@example.com"]
    assert ada["role"] == "editor" and ada["environments"] == ["demo/staging"]
    # The audit log names the person the provider named.
    status, body, _ = sso_server.api("GET", "/v1/audit?actor=ada@example.com")
    assert status == 200 and body["entries"], body
    assert body["entries"][-1]["actor"]["name"] == "ada@example.com"
    assert "single sign-on" in body["entries"][-1]["summary"]

    # The way back used once, used again in another browser: refused, no session.
    [callback] = callbacks
    other = browser.new_context().new_page()
    other.goto(callback)
    expect(other.get_by_role("heading", name="Sign-in refused")).to_be_visible()
    expect(other.locator("main")).to_contain_text("not started in this browser")
    assert session_cookies(other) == []
    other.context.close()
    # And again with this browser's state cookie put back: the state is spent.
    page.context.clear_cookies()
    state = urllib.parse.parse_qs(urllib.parse.urlparse(callback).query)["state"][0]
    page.context.add_cookies(
        [{"name": "vane_oidc_state", "value": state, "domain": "127.0.0.1", "path": "/sign-in/oidc"}]
    )
    page.goto(callback)
    expect(page.locator("main")).to_contain_text("finished already")
    assert session_cookies(page) == []
    check_page(page, "sign-in-refused")


def test_a_disallowed_domain_and_a_group_without_a_role_get_no_session(page, sso_server):
    page.goto(sso_server.url + "/sign-in")
    page.get_by_role("link", name="Sign in with Test IdP").click()
    page.get_by_role("button", name="eve", exact=True).click()
    expect(page.get_by_role("heading", name="Sign-in refused")).to_be_visible()
    expect(page.locator("main")).to_contain_text("accounts are created only for emails at example.com")
    assert session_cookies(page) == []

    page.goto(sso_server.url + "/sign-in")
    page.get_by_role("link", name="Sign in with Test IdP").click()
    page.get_by_role("button", name="sam", exact=True).click()
    expect(page.locator("main")).to_contain_text("none of them has a role in Vane")
    assert session_cookies(page) == []


def test_the_provider_saying_no_is_a_page(page, sso_server):
    page.goto(sso_server.url + "/sign-in")
    page.get_by_role("link", name="Sign in with Test IdP").click()
    page.get_by_role("button", name="Deny").click()
    expect(page.get_by_role("heading", name="Sign-in refused")).to_be_visible()
    expect(page.locator("main")).to_contain_text("access_denied")
    assert session_cookies(page) == []


@pytest.mark.parametrize(
    "mode, text",
    [
        ("wrong_audience", "not for Vane's client id"),
        ("wrong_issuer", "not by the configured identity provider"),
        ("expired", "expired"),
        ("bad_signature", "signature does not match"),
        ("replayed_nonce", "replayed token"),
        ("injected_code", "PKCE code_verifier is missing or does not match"),
    ],
)
def test_each_bad_token_or_code_is_refused_with_its_page(page, fake_server, fake_issuer, mode, text):
    # A good sign-in first: the fake then holds a token and a code of an earlier sign-in.
    fake_issuer.mode = "good"
    page.goto(fake_server.url + "/sign-in")
    page.get_by_role("link", name="Sign in with Test IdP").click()
    page.wait_for_url(fake_server.url + "/")
    page.context.clear_cookies()

    fake_issuer.mode = mode
    expect_refusal(page, fake_server, text)
    fake_issuer.mode = "good"


def test_password_sign_in_is_off_but_for_the_break_glass_admin(page, fake_server):
    status, body, _ = fake_server.api("POST", "/v1/users", {"email": "pat@example.com", "role": "viewer"})
    assert status == 201, body
    page.goto(fake_server.url + "/sign-in")
    expect(page.get_by_role("heading", name="Break-glass administrator")).to_be_visible()
    check_page(page, "sign-in-break-glass")
    sign_in(page, fake_server, "pat@example.com", body["oneTimePassword"])
    expect(page.get_by_role("alert")).to_contain_text("password sign-in is turned off")
    assert session_cookies(page) == []
    sign_in(page, fake_server, "admin", fake_server.first_password)
    page.wait_for_url(fake_server.url + "/account")
    assert len(session_cookies(page)) == 1


def test_an_unreachable_provider_is_a_page(page):
    port = free_port()
    closed = f"http://127.0.0.1:{free_port()}"
    running = start_server(sso_arguments(closed, port), port=port)
    try:
        expect_refusal(running and page, running, "cannot reach the identity provider")
    finally:
        stop_server(running)

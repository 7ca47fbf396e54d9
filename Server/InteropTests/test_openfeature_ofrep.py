"""The official OpenFeature Python SDK with its OFREP provider (PyPI `openfeature-sdk`,
`openfeature-provider-ofrep`) against a real `vane serve`: a flag of every type evaluates without
an error, single and bulk, with and without an ETag.

The provider (0.3.0) evaluates one flag per request and reads `variant` from every successful
answer unconditionally; it never calls the bulk endpoint. The bulk tests therefore fetch
`/ofrep/v1/evaluate/flags` over real HTTP, as a static-context provider does (first without, then
with `If-None-Match`), and hand each item to the official provider's own parsing through its
`requests` session, so every bulk item is read exactly as the provider reads a single answer."""

import json

import pytest
import requests
from openfeature import api
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext
from openfeature.flag_evaluation import Reason
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

LONG_TEXT = "A banner text longer than sixty-four bytes, which once had no variant at all."

TEMPLATE = {
    "conditions": [
        {"name": "germany", "expression": "device.country in ['de']"},
        {"name": "half", "expression": "percent('checkout') between 0 and 50"},
    ],
    "parameters": {
        "dark_mode": {"defaultValue": {"value": "true"}, "valueType": "BOOLEAN"},
        "max_items": {"defaultValue": {"value": "25"}, "valueType": "NUMBER"},
        "discount": {"defaultValue": {"value": "0.5"}, "valueType": "NUMBER"},
        "banner": {
            "defaultValue": {"value": "Welcome!"},
            "conditionalValues": {"germany": {"value": "Willkommen!"}},
            "valueType": "STRING",
        },
        "long_text": {"defaultValue": {"value": LONG_TEXT}, "valueType": "STRING"},
        "layout": {"defaultValue": {"value": '{"columns": 2, "hero": true}'}, "valueType": "JSON"},
        "steps": {"defaultValue": {"value": '["cart", "pay"]'}, "valueType": "JSON"},
        "checkout": {
            "defaultValue": {"value": "control"},
            "conditionalValues": {"half": {"value": "one_page"}},
            "valueType": "STRING",
        },
        "legacy_mode": {"defaultValue": {"useInAppDefault": True}, "valueType": "BOOLEAN"},
    },
}

GERMAN = EvaluationContext(targeting_key="user-7", attributes={"device.country": "de"})


@pytest.fixture(scope="module")
def published(server):
    server.publish(TEMPLATE)
    return server


def provider_for(server) -> OFREPProvider:
    key = server.client_key
    return OFREPProvider(server.url, headers_factory=lambda: {"Authorization": "Bearer " + key})


def client_with(provider):
    api.set_provider(provider)
    return api.get_client()


def expect_success(details, value, reason=None):
    """An evaluation the app can use: no error, the server's value, a variant."""
    assert details.error_code is None, (details.flag_key, details.error_code, details.error_message)
    assert details.value == value, details
    assert isinstance(details.variant, str), details
    if reason is not None:
        assert details.reason == reason, details


def evaluate_every_type(client, context):
    """Evaluates each flag with the typed call an app would use; returns the details by key."""
    return {
        "dark_mode": client.get_boolean_details("dark_mode", False, context),
        "max_items": client.get_integer_details("max_items", 0, context),
        "discount": client.get_float_details("discount", 0.0, context),
        "banner": client.get_string_details("banner", "", context),
        "long_text": client.get_string_details("long_text", "", context),
        "layout": client.get_object_details("layout", {}, context),
        "steps": client.get_object_details("steps", [], context),
        "checkout": client.get_string_details("checkout", "", context),
        "legacy_mode": client.get_boolean_details("legacy_mode", False, context),
    }


def check_every_type(details):
    expect_success(details["dark_mode"], True, Reason.STATIC)
    assert details["dark_mode"].variant == "true"
    expect_success(details["max_items"], 25, Reason.STATIC)
    expect_success(details["discount"], 0.5, Reason.STATIC)
    expect_success(details["banner"], "Willkommen!", Reason.TARGETING_MATCH)
    assert details["banner"].variant == "Willkommen!"
    # A long string and JSON values: an opaque variant made from the value, never a condition.
    expect_success(details["long_text"], LONG_TEXT, Reason.STATIC)
    expect_success(details["layout"], {"columns": 2, "hero": True}, Reason.STATIC)
    expect_success(details["steps"], ["cart", "pay"], Reason.STATIC)
    for key in ("long_text", "layout", "steps"):
        assert details[key].variant.startswith("value-"), details[key]
        assert len(details[key].variant) == len("value-") + 16, details[key]
    assert details["layout"].variant != details["steps"].variant
    assert details["checkout"].value in ("control", "one_page")
    expect_success(details["checkout"], details["checkout"].value)
    assert details["checkout"].variant == details["checkout"].value
    assert "half" not in details["checkout"].variant
    # Left to the app: the code default, no error.
    expect_success(details["legacy_mode"], False, Reason.DISABLED)


def test_single_evaluations_of_every_type(published):
    client = client_with(provider_for(published))
    details = evaluate_every_type(client, GERMAN)
    check_every_type(details)
    # The same value twice gives the same variant (analytics can group by it).
    again = evaluate_every_type(client, GERMAN)
    for key in ("long_text", "layout", "steps"):
        assert again[key].variant == details[key].variant


def test_unknown_flag_is_flag_not_found(published):
    client = client_with(provider_for(published))
    details = client.get_boolean_details("no_such_flag", True, GERMAN)
    assert details.value is True
    assert details.error_code is not None and details.error_code.value == "FLAG_NOT_FOUND"


class BulkAnswers(BaseAdapter):
    """Answers the provider's single-flag requests from one bulk evaluation that it fetched from
    the server over real HTTP, with `If-None-Match` once it has an ETag."""

    def __init__(self, server, context: dict):
        super().__init__()
        self.server = server
        self.context = context
        self.etag = None
        self.flags = {}
        self.statuses = []

    def refresh(self):
        headers = {"Authorization": "Bearer " + self.server.client_key}
        if self.etag is not None:
            headers["If-None-Match"] = self.etag
        response = requests.post(
            self.server.url + "/ofrep/v1/evaluate/flags",
            json={"context": self.context},
            headers=headers,
            timeout=10,
        )
        self.statuses.append(response.status_code)
        if response.status_code == 304:
            return
        assert response.status_code == 200, response.text
        self.etag = response.headers["ETag"]
        self.flags = {flag["key"]: flag for flag in response.json()["flags"]}

    def send(self, request, **kwargs):
        key = request.url.rsplit("/", 1)[-1]
        sent = json.loads(request.body or b"{}").get("context", {})
        assert sent == self.context, "the bulk answer was made for another context"
        item = self.flags.get(key)
        response = requests.Response()
        response.status_code = 404 if item is None else 200
        response._content = json.dumps(
            item or {"errorCode": "FLAG_NOT_FOUND", "errorDetails": f"no flag {key}"}
        ).encode()
        response.headers = CaseInsensitiveDict({"Content-Type": "application/json"})
        response.url = request.url
        response.request = request
        return response

    def close(self):
        pass


def bulk_client(server, context: EvaluationContext):
    provider = provider_for(server)
    wire_context = {"targetingKey": context.targeting_key, **context.attributes}
    answers = BulkAnswers(server, wire_context)
    provider.session.mount(server.url + "/ofrep/v1/evaluate/flags/", answers)
    return client_with(provider), answers


def test_bulk_evaluations_of_every_type_with_and_without_etag(published):
    client, answers = bulk_client(published, GERMAN)
    answers.refresh()
    assert answers.statuses == [200] and answers.etag
    check_every_type(evaluate_every_type(client, GERMAN))

    # Unchanged: 304, and the kept items still read as before.
    answers.refresh()
    assert answers.statuses == [200, 304]
    check_every_type(evaluate_every_type(client, GERMAN))

    # A publish changes the answer: the old ETag gets 200 with the new values.
    changed = json.loads(json.dumps(TEMPLATE))
    changed["parameters"]["layout"]["defaultValue"]["value"] = '{"columns": 3}'
    published.publish(changed)
    try:
        answers.refresh()
        assert answers.statuses == [200, 304, 200]
        layout = client.get_object_details("layout", {}, GERMAN)
        expect_success(layout, {"columns": 3}, Reason.STATIC)
        assert layout.variant.startswith("value-")
    finally:
        published.publish(TEMPLATE)

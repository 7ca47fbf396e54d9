"""Webhooks from a real `vane serve`, each delivery checked with the Standard Webhooks reference
verifier: every event type, a rotated secret, and an endpoint that was down for a while."""

import time

import pytest
from conftest import Receiver
from standardwebhooks import Webhook, WebhookVerificationError

PROJECT = "/v1/projects/demo"
ENVIRONMENT = PROJECT + "/environments/production"


def wait_for(condition, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def create_endpoint(server, url, events=None):
    body = {"url": url}
    if events:
        body["events"] = events
    status, endpoint, _ = server.api("POST", PROJECT + "/webhooks", body)
    assert status == 201, endpoint
    return endpoint


def delete_endpoint(server, endpoint):
    status, body, _ = server.api("DELETE", PROJECT + "/webhooks/" + endpoint["id"])
    assert status == 204, body


def current_template(server):
    status, template, _ = server.api("GET", ENVIRONMENT + "/template")
    assert status == 200, template
    template.pop("version", None)
    return template


def publish_value(server, value):
    """Publishes the live template with `webhook_value` set; returns the new version number."""
    template = current_template(server)
    template.setdefault("parameters", {})["webhook_value"] = {"defaultValue": {"value": value}}
    status, body, _ = server.api("PUT", ENVIRONMENT + "/template", template, headers={"If-Match": "*"})
    assert status == 200, body
    return int(body["version"]["versionNumber"])


def verify(secret, headers, body):
    """The reference verifier's check of one delivery; returns the payload."""
    return Webhook(secret).verify(body, headers)


def test_every_event_type_arrives_signed_as_standard_webhooks_says(server, receiver):
    endpoint = create_endpoint(server, receiver.url)
    secret = endpoint["secret"]
    try:
        version = publish_value(server, "first")
        status, body, _ = server.api(
            "POST", ENVIRONMENT + "/flags/payments_enabled/switch", {"to": "off", "message": "webhook test"}
        )
        assert status == 200 and body["published"], body
        status, body, _ = server.api("POST", ENVIRONMENT + "/rollback", {"versionNumber": str(version)})
        assert status == 200, body
        assert wait_for(lambda: len(receiver.received()) >= 3), receiver.received()

        types = []
        for headers, raw in receiver.received():
            assert headers["content-type"] == "application/json"
            assert headers["webhook-id"].startswith("msg_")
            assert abs(int(headers["webhook-timestamp"]) - time.time()) < 60
            payload = verify(secret, headers, raw)
            assert payload["data"]["project"] == "demo"
            assert payload["data"]["environment"] == "production"
            assert payload["data"]["actor"]
            types.append((payload["type"], payload["data"]["version"]))
        assert types == [
            ("version.published", version),
            ("flag.kill_switch", version + 1),
            ("version.rolled_back", version + 2),
        ]
        switch = receiver.payloads()[1]["data"]
        assert (switch["flag"], switch["position"]) == ("payments_enabled", "off")
        assert receiver.payloads()[2]["data"]["rollbackSource"] == version

        # A body changed on the way, or another secret, does not verify.
        headers, raw = receiver.received()[0]
        with pytest.raises(WebhookVerificationError):
            verify(secret, headers, raw.replace(b"production", b"staging"))
        other = create_endpoint(server, receiver.url, ["experiment.started"])
        delete_endpoint(server, other)
        with pytest.raises(WebhookVerificationError):
            verify(other["secret"], headers, raw)
    finally:
        delete_endpoint(server, endpoint)


def test_while_a_secret_rotates_both_secrets_verify_and_after_the_grace_only_the_new(server, receiver):
    endpoint = create_endpoint(server, receiver.url, ["version.published"])
    old = endpoint["secret"]
    try:
        status, rotated, _ = server.api(
            "POST", PROJECT + "/webhooks/" + endpoint["id"] + "/rotate-secret", {"graceHours": 1}
        )
        assert status == 200, rotated
        new = rotated["secret"]
        assert new != old
        publish_value(server, "rotating")
        assert wait_for(lambda: len(receiver.received()) == 1)
        headers, raw = receiver.received()[0]
        assert len(headers["webhook-signature"].split(" ")) == 2
        # A receiver still on the old secret and one already on the new both accept it.
        assert verify(old, headers, raw)["type"] == "version.published"
        assert verify(new, headers, raw)["type"] == "version.published"

        status, ended, _ = server.api(
            "POST", PROJECT + "/webhooks/" + endpoint["id"] + "/rotate-secret", {"graceHours": 0}
        )
        assert status == 200, ended
        publish_value(server, "rotated")
        assert wait_for(lambda: len(receiver.received()) == 2)
        headers, raw = receiver.received()[1]
        assert len(headers["webhook-signature"].split(" ")) == 1
        assert verify(ended["secret"], headers, raw)["type"] == "version.published"
        with pytest.raises(WebhookVerificationError):
            verify(new, headers, raw)
    finally:
        delete_endpoint(server, endpoint)


def test_an_endpoint_down_for_a_while_receives_everything_afterwards_in_version_order(server):
    down = Receiver()  # its port is chosen but nothing listens yet
    endpoint = create_endpoint(server, down.url, ["version.published"])
    try:
        versions = [publish_value(server, f"while down {index}") for index in range(5)]
        path = PROJECT + "/webhooks/" + endpoint["id"] + "/deliveries"

        def failed_twice():
            status, page, _ = server.api("GET", path)
            oldest = page["deliveries"][-1]
            return oldest.get("lastAttempt", {}).get("number", 0) >= 2

        assert wait_for(failed_twice), server.api("GET", path)[1]
        status, page, _ = server.api("GET", path)
        oldest = page["deliveries"][-1]
        assert oldest["status"] == "pending" and "statusCode" not in oldest["lastAttempt"]
        assert all("lastAttempt" not in delivery for delivery in page["deliveries"][:-1]), page

        down.start()
        try:
            assert wait_for(lambda: len(down.received()) >= len(versions)), down.received()
            time.sleep(0.5)  # nothing more should come
            ids = [headers["webhook-id"] for headers, _ in down.received()]
            assert len(ids) == len(set(ids)) == len(versions)
            payloads = [verify(endpoint["secret"], headers, raw) for headers, raw in down.received()]
            assert [payload["data"]["version"] for payload in payloads] == versions
            status, page, _ = server.api("GET", path)
            assert [delivery["status"] for delivery in page["deliveries"]] == ["delivered"] * len(versions)
        finally:
            down.stop()
    finally:
        delete_endpoint(server, endpoint)

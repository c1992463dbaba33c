"""get-captcha and verify-captcha for the Default type: a picture drawn on the server whose
answer never leaves it, good for one verification; the application's rule decides whether
there is one at all; other types' secrets stay masked."""

from __future__ import annotations

import base64
import time

import pytest
from fastapi.testclient import TestClient

from iam_console.api.app import api
from iam_console.signin import captcha
from tests.api.conftest import ok_body
from tests.conftest import unique


@pytest.fixture(scope="module")
def apps(admin) -> dict[str, str]:
    """Applications of one organization whose first Captcha provider has each rule."""
    org = unique("capt")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": org}))
    ok_body(admin.post("/api/add-provider", json={"owner": org, "name": f"{org}-default", "category": "Captcha",
                                              "type": "Default"}))
    ok_body(admin.post("/api/add-provider", json={"owner": org, "name": f"{org}-recaptcha", "category": "Captcha",
                                              "type": "reCAPTCHA v2", "clientId": "site-key",
                                              "clientSecret": "server-secret"}))
    names = {}
    for label, provider, rule in (("always", "default", "Always"), ("none", "default", "None"),
                                  ("internet", "default", "Internet-Only"), ("third", "recaptcha", "Always")):
        names[label] = f"{org}-{label}"
        ok_body(admin.post("/api/add-application", json={
            "owner": "admin", "name": names[label], "organization": org,
            "providers": [{"name": f"{org}-{provider}", "rule": rule}]}))
    return names


def _challenge(apps, label: str, address: str = "203.0.113.7") -> dict:
    client = TestClient(api, client=(address, 50000))
    return ok_body(client.get("/api/get-captcha", params={"applicationId": f"admin/{apps[label]}"}))["data"]


def _verify(captcha_id: str, answer: str, captcha_type: str = "Default") -> dict:
    return TestClient(api).post("/api/verify-captcha", data={
        "captchaType": captcha_type, "captchaToken": answer, "clientSecret": captcha_id}).json()


def test_a_default_captcha_is_a_picture_answered_once(apps, monkeypatch):
    monkeypatch.setattr(captcha, "_answer", lambda: "31415")
    shown = _challenge(apps, "always")
    assert shown["type"] == "Default" and "31415" not in str(shown)
    assert base64.b64decode(shown["captchaImage"]).startswith(b"\x89PNG")
    assert _verify(shown["captchaId"], "31415")["data"] is True
    assert _verify(shown["captchaId"], "31415")["data"] is False  # spent

    other = _challenge(apps, "always")
    assert _verify(other["captchaId"], "00000")["data"] is False
    assert _verify(other["captchaId"], "31415")["data"] is False  # a wrong guess spent it too


def test_a_forged_or_expired_captcha_id_fails(apps, monkeypatch):
    monkeypatch.setattr(captcha, "_answer", lambda: "27182")
    shown = _challenge(apps, "always")
    nonce, expires, mac = shown["captchaId"].split(".")
    assert _verify(f"{nonce}.{int(expires) + 3600}.{mac}", "27182")["data"] is False  # a later expiry
    assert _verify(f"{nonce}.{expires}.{'0' * 32}", "27182")["data"] is False
    assert _verify("junk", "27182")["data"] is False
    monkeypatch.setattr(time, "time", lambda: int(expires) + 1)
    assert _verify(shown["captchaId"], "27182")["data"] is False


def test_the_rule_decides_whether_there_is_a_captcha(apps):
    assert _challenge(apps, "none") == {"type": "none"}
    # Internet-Only asks nothing of a client on an internal address
    assert _challenge(apps, "internet", "10.1.2.3") == {"type": "none"}
    assert _challenge(apps, "internet", "8.8.8.8")["type"] == "Default"


def test_another_types_settings_are_public_but_its_secrets_are_not(apps):
    shown = _challenge(apps, "third")
    assert (shown["type"], shown["clientId"], shown["clientSecret"]) == ("reCAPTCHA v2", "site-key", "***")
    refused = _verify("x", "y", "reCAPTCHA")
    assert refused["status"] == "error" and "not supported" in refused["msg"]


def test_bad_requests(apps):
    missing = TestClient(api).get("/api/get-captcha", params={"applicationId": "admin/none-such"}).json()
    assert missing["status"] == "error" and "does not exist" in missing["msg"]
    empty = _verify("", "")
    assert empty["status"] == "error" and "cannot be empty" in empty["msg"]


def test_pictures_are_limited_per_client_address(apps):
    address = "198.51.100.77"
    for _ in range(captcha.PER_ADDRESS[0]):
        _challenge(apps, "always", address)
    client = TestClient(api, client=(address, 50000))
    refused = client.get("/api/get-captcha", params={"applicationId": f"admin/{apps['always']}"}).json()
    assert refused["status"] == "error" and "try again" in refused["msg"]
    assert _challenge(apps, "always", "198.51.100.78")["type"] == "Default"  # another address is not held up

"""The OAuth and HTTP helpers shared by the platform adapters."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.common import outbound
from apps.providers import httpcall, oauth
from apps.providers.errors import Action, ErrorKind, ProviderError


def test_the_s256_challenge_matches_the_rfc_7636_example():
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    assert oauth.code_challenge(verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_verifiers_and_states_are_fresh_and_well_formed():
    verifiers = {oauth.new_code_verifier() for _ in range(20)}
    assert len(verifiers) == 20
    assert all(43 <= len(v) <= 128 for v in verifiers)
    assert oauth.new_state() != oauth.new_state()


def test_expiry_arithmetic():
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    assert oauth.expires_at(7200, now=now) == now + timedelta(hours=2)
    assert oauth.expires_at(None) is None
    assert oauth.parse_expires_at("2026-12-02T12:00:00") == now
    assert oauth.is_near_expiry(None, timedelta(minutes=5)) is False
    assert oauth.is_near_expiry(datetime.now(UTC) + timedelta(minutes=1), timedelta(minutes=5))


@pytest.mark.parametrize(
    ("status", "payload", "kind", "action"),
    [
        (400, {"error": "invalid_grant"}, ErrorKind.AUTH_EXPIRED, Action.RECONNECT),
        (401, {"error": "invalid_client"}, ErrorKind.PERMISSION_MISSING, Action.CONTACT_SUPPORT),
        (429, {}, ErrorKind.RATE_LIMITED, Action.WAIT),
        (503, {}, ErrorKind.PROVIDER_UNAVAILABLE, Action.WAIT),
    ],
)
def test_token_endpoint_refusals_are_classified(respx_mock, status, payload, kind, action):
    respx_mock.post("https://auth.example/token").respond(
        status, json=payload, headers={"Retry-After": "30"}
    )
    with pytest.raises(ProviderError) as err:
        oauth.token_request("https://auth.example/token", {"grant_type": "refresh_token"})
    assert err.value.kind == kind
    assert err.value.action == action
    if status == 429:
        assert err.value.retry_at is not None


@pytest.mark.parametrize(
    ("url", "addresses"),
    [
        ("http://example.com", ["93.184.216.34"]),
        ("https://user:pw@example.com", ["93.184.216.34"]),
        ("https://example.com", ["127.0.0.1"]),
        ("https://example.com", ["10.1.2.3"]),
        ("https://example.com", ["169.254.169.254"]),
        ("https://example.com", ["93.184.216.34", "::1"]),
        ("https://example.com", ["fd00::1"]),
    ],
)
def test_only_public_https_hosts_are_accepted(monkeypatch, url, addresses):
    monkeypatch.setattr(outbound, "resolve", lambda host, port: addresses)
    with pytest.raises(outbound.ForbiddenTarget):
        httpcall.require_public_https(url)


def test_a_public_https_host_is_accepted(monkeypatch):
    monkeypatch.setattr(outbound, "resolve", lambda host, port: ["93.184.216.34"])
    assert httpcall.require_public_https("https://example.com/x") == "https://example.com/x"


def test_a_host_that_does_not_resolve_is_refused(monkeypatch):
    def fail(host, port):
        raise OSError("no such host")

    monkeypatch.setattr(outbound, "resolve", fail)
    with pytest.raises(outbound.ForbiddenTarget):
        httpcall.require_public_https("https://nowhere.example")

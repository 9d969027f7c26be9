"""Connecting accounts from the web app: start, callback (good, bad state, denied), the
app-password form, and who may do it."""

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from apps.accounts.models import SocialAccount
from apps.accounts.services import social_account_credentials
from apps.common import outbound
from apps.providers import oauth
from apps.providers.mastodon.models import MastodonApp
from tests.providers.social_helpers import go_offline

pytestmark = pytest.mark.django_db

MASTODON = "https://mastodon.example"


@pytest.fixture(autouse=True)
def offline(monkeypatch, settings):
    settings.X_CLIENT_ID = "x-client"
    settings.X_CLIENT_SECRET = "x-secret"
    settings.LINKEDIN_CLIENT_ID = "li-client"
    settings.LINKEDIN_CLIENT_SECRET = "li-secret"
    go_offline(monkeypatch)


@pytest.fixture
def as_alice(client, alice, workspace_a):
    client.force_login(alice)
    return client


def _fake_platform(respx_mock, platform: str) -> None:
    """The token exchange and profile call each platform answers after consent."""
    if platform == "x":
        respx_mock.post("https://api.x.com/2/oauth2/token").respond(
            200, json={"access_token": "xa", "refresh_token": "xr", "expires_in": 7200}
        )
        respx_mock.get("https://api.x.com/2/users/me").respond(
            200, json={"data": {"id": "42", "name": "Alice", "username": "alice"}}
        )
    elif platform == "linkedin":
        respx_mock.post("https://www.linkedin.com/oauth/v2/accessToken").respond(
            200, json={"access_token": "la", "expires_in": 5184000}
        )
        respx_mock.get("https://api.linkedin.com/v2/userinfo").respond(
            200, json={"sub": "42", "name": "Alice Example"}
        )
    else:
        respx_mock.post(f"{MASTODON}/api/v1/apps").respond(
            200, json={"client_id": "mc", "client_secret": "ms"}
        )
        respx_mock.post(f"{MASTODON}/oauth/token").respond(200, json={"access_token": "ma"})
        respx_mock.get(f"{MASTODON}/api/v1/accounts/verify_credentials").respond(
            200, json={"id": "42", "username": "alice", "display_name": "Alice"}
        )
        respx_mock.get(f"{MASTODON}/api/v2/instance").respond(200, json={"version": "4.3.0"})


def _start(client, platform: str):
    data = {"instance": "mastodon.example"} if platform == "mastodon" else {}
    return client.post(f"/w/ws-a/connect/{platform}/", data)


PLATFORMS = ["x", "linkedin", "mastodon"]
AUTHORIZE = {
    "x": "https://x.com/i/oauth2/authorize",
    "linkedin": "https://www.linkedin.com/oauth/v2/authorization",
    "mastodon": f"{MASTODON}/oauth/authorize",
}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_start_shows_a_connect_page(as_alice, platform):
    response = as_alice.get(f"/w/ws-a/connect/{platform}/")
    assert response.status_code == 200
    assert b"Continue to" in response.content
    assert (b'name="instance"' in response.content) is (platform == "mastodon")


@pytest.mark.parametrize(
    ("platform", "note"),
    [
        ("reddit", "API access for new apps needs Reddit"),
        ("linkedin", "Community Management API"),
        ("linkedin", "w_organization_social"),
    ],
)
def test_the_connect_page_says_what_to_know_before_connecting(as_alice, platform, note):
    page = as_alice.get(f"/w/ws-a/connect/{platform}/").content.decode()
    assert note in page.split("Continue to")[0]  # before the person starts
    assert f"docs/platforms/{platform}.md" in page


def test_a_platform_without_a_note_still_names_its_docs_page(as_alice):
    page = as_alice.get("/w/ws-a/connect/x/").content.decode()
    assert 'id="platform_note"' not in page
    assert "docs/platforms/x.md" in page


@pytest.mark.parametrize("platform", PLATFORMS)
def test_start_stores_state_and_verifier_and_redirects(respx_mock, as_alice, platform):
    _fake_platform(respx_mock, platform)
    response = _start(as_alice, platform)
    assert response.status_code == 302
    target = urlsplit(response["Location"])
    assert f"{target.scheme}://{target.netloc}{target.path}" == AUTHORIZE[platform]
    query = {k: v[0] for k, v in parse_qs(target.query).items()}
    flows = as_alice.session["connect_flows"]
    flow = flows[query["state"]]
    assert flow["platform"] == platform
    assert query["redirect_uri"] == f"http://127.0.0.1:8000/connect/{platform}/callback/"
    if platform != "linkedin":  # LinkedIn's web flow takes no PKCE
        assert query["code_challenge"] == oauth.code_challenge(flow["verifier"])
        assert query["code_challenge_method"] == "S256"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_callback_connects_the_account_with_encrypted_credentials(
    respx_mock, as_alice, workspace_a, platform
):
    _fake_platform(respx_mock, platform)
    state = parse_qs(urlsplit(_start(as_alice, platform)["Location"]).query)["state"][0]
    response = as_alice.get(f"/connect/{platform}/callback/", {"state": state, "code": "c0de"})
    assert response.status_code == 302
    assert response["Location"] == "/w/ws-a/accounts/"  # the workspace's accounts page
    account = SocialAccount.objects.get(workspace=workspace_a, platform=platform)
    assert account.status == SocialAccount.Status.CONNECTED
    assert account.handle in ("alice", "Alice Example", "alice@mastodon.example")
    token = social_account_credentials(account)["access_token"]
    assert token in ("xa", "la", "ma")
    assert token.encode() not in bytes(account.credentials_ciphertext)
    # The state works once.
    again = as_alice.get(f"/connect/{platform}/callback/", {"state": state, "code": "c0de"})
    assert again.status_code == 400


@pytest.mark.parametrize("platform", PLATFORMS)
def test_callback_with_a_state_this_session_never_started_is_refused(
    respx_mock, as_alice, platform
):
    _fake_platform(respx_mock, platform)
    _start(as_alice, platform)
    response = as_alice.get(f"/connect/{platform}/callback/", {"state": "forged", "code": "c"})
    assert response.status_code == 400
    assert b"not started here" in response.content
    assert not SocialAccount.objects.filter(platform=platform).exists()
    token_urls = ("oauth2/token", "accessToken", "oauth/token")
    assert not [c for c in respx_mock.calls if any(u in str(c.request.url) for u in token_urls)]


@pytest.mark.parametrize(
    ("platform", "error"),
    [
        ("x", "access_denied"),
        ("linkedin", "user_cancelled_authorize"),
        ("mastodon", "access_denied"),
    ],
)
def test_a_denied_consent_connects_nothing(respx_mock, as_alice, platform, error):
    _fake_platform(respx_mock, platform)
    state = parse_qs(urlsplit(_start(as_alice, platform)["Location"]).query)["state"][0]
    response = as_alice.get(f"/connect/{platform}/callback/", {"state": state, "error": error})
    assert response.status_code == 400
    assert b"cancelled" in response.content
    assert not SocialAccount.objects.filter(platform=platform).exists()


def test_a_state_from_another_platform_is_refused(respx_mock, as_alice):
    _fake_platform(respx_mock, "x")
    state = parse_qs(urlsplit(_start(as_alice, "x")["Location"]).query)["state"][0]
    response = as_alice.get("/connect/linkedin/callback/", {"state": state, "code": "c"})
    assert response.status_code == 400


def test_a_failed_code_exchange_shows_the_error(respx_mock, as_alice):
    respx_mock.post("https://api.x.com/2/oauth2/token").respond(
        400, json={"error": "invalid_request", "error_description": "Value passed was invalid."}
    )
    state = parse_qs(urlsplit(_start(as_alice, "x")["Location"]).query)["state"][0]
    response = as_alice.get("/connect/x/callback/", {"state": state, "code": "stale"})
    assert response.status_code == 502
    assert b"Value passed was invalid." in response.content
    assert not SocialAccount.objects.exists()


def test_mastodon_needs_an_instance(as_alice):
    response = as_alice.post("/w/ws-a/connect/mastodon/", {"instance": ""})
    assert response.status_code == 400
    assert b"domain" in response.content


def test_mastodon_refuses_a_private_instance(as_alice, monkeypatch):
    monkeypatch.setattr(outbound, "resolve", lambda host, port: ["192.168.1.10"])
    response = as_alice.post("/w/ws-a/connect/mastodon/", {"instance": "intranet.example"})
    assert response.status_code == 400
    assert not MastodonApp.objects.exists()


def test_reconnecting_refreshes_an_account_that_needed_it(respx_mock, as_alice, workspace_a):
    account = SocialAccount.objects.create(
        workspace=workspace_a,
        platform="x",
        remote_id="42",
        handle="old",
        status=SocialAccount.Status.NEEDS_RECONNECT,
    )
    _fake_platform(respx_mock, "x")
    state = parse_qs(urlsplit(_start(as_alice, "x")["Location"]).query)["state"][0]
    as_alice.get("/connect/x/callback/", {"state": state, "code": "c"})
    account.refresh_from_db()
    assert account.status == SocialAccount.Status.CONNECTED
    assert account.handle == "alice"
    assert SocialAccount.objects.filter(platform="x").count() == 1


def _session(refresh="br"):
    return {
        "accessJwt": "ba",
        "refreshJwt": refresh,
        "handle": "alice.example",
        "did": "did:plc:alice",
        "didDoc": {"service": [{"id": "#atproto_pds", "serviceEndpoint": "https://pds.example"}]},
    }


def test_bluesky_start_leads_to_the_app_password_form(as_alice):
    response = as_alice.get("/w/ws-a/connect/bluesky/")
    assert response.status_code == 302
    assert response["Location"] == "/w/ws-a/connect/bluesky/password/"
    form = as_alice.get(response["Location"])
    assert form.status_code == 200
    assert b'type="password"' in form.content
    assert b"App password" in form.content


def test_bluesky_app_password_connects_the_account(respx_mock, as_alice, workspace_a):
    login = respx_mock.post("https://bsky.social/xrpc/com.atproto.server.createSession").respond(
        200, json=_session()
    )
    response = as_alice.post(
        "/w/ws-a/connect/bluesky/password/",
        {"identifier": "alice.example", "password": "abcd-efgh-ijkl-mnop"},
    )
    assert response.status_code == 302
    assert login.call_count == 1
    account = SocialAccount.objects.get(workspace=workspace_a, platform="bluesky")
    assert account.remote_id == "did:plc:alice"
    assert account.settings == {"did": "did:plc:alice", "pds": "https://pds.example"}
    assert social_account_credentials(account)["refresh_jwt"] == "br"
    assert account.token_expires_at > datetime.now(UTC) + timedelta(minutes=100)


def test_bluesky_wrong_password_shows_the_form_again(respx_mock, as_alice):
    respx_mock.post("https://bsky.social/xrpc/com.atproto.server.createSession").respond(
        401, json={"error": "AuthenticationRequired", "message": "Invalid identifier or password"}
    )
    response = as_alice.post(
        "/w/ws-a/connect/bluesky/password/", {"identifier": "alice.example", "password": "no"}
    )
    assert response.status_code == 400
    assert b"did not accept" in response.content
    assert not SocialAccount.objects.exists()


def test_bluesky_form_requires_its_fields(as_alice):
    response = as_alice.post("/w/ws-a/connect/bluesky/password/", {"identifier": ""})
    assert response.status_code == 400
    assert b"required" in response.content


@pytest.mark.parametrize("path", ["/w/ws-a/connect/x/", "/w/ws-a/connect/bluesky/password/"])
@pytest.mark.parametrize(("persona", "status"), [("bob", 403), ("vera", 403), ("charlie", 404)])
def test_only_workspace_admins_connect(
    client, request, workspace_a, workspace_b, path, persona, status
):
    client.force_login(request.getfixturevalue(persona))
    assert client.get(path).status_code == status
    assert client.post(path, {}).status_code == status


def test_anonymous_users_are_sent_to_log_in(client, workspace_a):
    response = client.get("/w/ws-a/connect/x/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_an_unknown_platform_is_404(as_alice):
    assert as_alice.get("/w/ws-a/connect/myspace/").status_code == 404


def test_the_sandbox_cannot_be_connected_from_the_web(as_alice):
    # Sandbox accounts are made through the API with a behaviour, not by consent.
    assert as_alice.get("/w/ws-a/connect/sandbox/").status_code == 404


def test_connect_callback_with_httpx_unreachable_shows_an_error(respx_mock, as_alice):
    respx_mock.post("https://api.x.com/2/oauth2/token").mock(side_effect=httpx.ConnectError("x"))
    state = parse_qs(urlsplit(_start(as_alice, "x")["Location"]).query)["state"][0]
    response = as_alice.get("/connect/x/callback/", {"state": state, "code": "c"})
    assert response.status_code == 502


def test_a_platform_without_its_app_credentials_never_goes_to_the_platform(as_alice, settings):
    settings.X_CLIENT_ID = ""
    page = as_alice.get("/w/ws-a/connect/x/").content.decode()
    assert "an operator sets X_CLIENT_ID" in page
    assert 'disabled aria-describedby="not-configured-why">Continue to X</button>' in page
    assert '<form method="post" class="form">' not in page
    response = _start(as_alice, "x")
    assert response.status_code == 503
    assert "Location" not in response
    assert "connect_flows" not in as_alice.session


def test_threads_falls_back_to_the_meta_app(as_alice, settings):
    settings.THREADS_APP_ID = settings.THREADS_APP_SECRET = ""
    settings.META_APP_ID, settings.META_APP_SECRET = "meta-id", "meta-secret"
    page = as_alice.get("/w/ws-a/connect/threads/").content.decode()
    assert "an operator sets" not in page
    assert "Continue to Threads</button>" in page

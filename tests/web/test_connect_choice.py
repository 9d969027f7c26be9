"""Connecting Facebook from the web app: after consent the person picks the Page to
publish as, and that Page (its id, name and Page token) is what is stored."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.sessions.models import Session
from django.test import Client

from apps.accounts.models import SocialAccount, WorkspaceMembership
from apps.accounts.services import social_account_credentials
from apps.web import connect_pending
from tests.factories import UserFactory, WorkspaceFactory, WorkspaceMembershipFactory
from tests.providers.social_helpers import go_offline

pytestmark = pytest.mark.django_db

G = "https://graph.facebook.com/v23.0"
BAKERY = {
    "id": "1122334455",
    "name": "Bakery",
    "access_token": "BAKERY-TOKEN",
    "tasks": ["ANALYZE", "ADVERTISE", "MODERATE", "CREATE_CONTENT", "MANAGE"],
}
CAFE = {"id": "777", "name": "Cafe", "access_token": "CAFE-TOKEN", "tasks": ["CREATE_CONTENT"]}
FAN_CLUB = {"id": "999", "name": "Fan club", "access_token": "FAN-TOKEN", "tasks": ["ANALYZE"]}
TOKENS = ("SHORT-USER", "LONG-USER", "BAKERY-TOKEN", "CAFE-TOKEN", "FAN-TOKEN")


@pytest.fixture(autouse=True)
def offline(monkeypatch, settings):
    settings.META_APP_ID = "meta-app"
    settings.META_APP_SECRET = "meta-secret"
    go_offline(monkeypatch)


@pytest.fixture
def as_alice(client, alice, workspace_a):
    client.force_login(alice)
    return client


@pytest.fixture
def client_factory():
    """A logged-in client whose session holds `pending` as its pending choices."""

    def make(user, pending: dict):
        client = Client()
        client.force_login(user)
        session = client.session
        session[connect_pending.SESSION_KEY] = pending
        session.save()
        return client

    return make


def _graph(respx_mock, pages: list[dict]) -> None:
    """Facebook's answers after consent: the code exchange, the long-lived exchange, the
    person, and the Pages they granted."""
    respx_mock.get(f"{G}/oauth/access_token", params={"code": "c0de"}).respond(
        200, json={"access_token": "SHORT-USER", "token_type": "bearer", "expires_in": 3600}
    )
    respx_mock.get(f"{G}/oauth/access_token", params={"grant_type": "fb_exchange_token"}).respond(
        200, json={"access_token": "LONG-USER", "token_type": "bearer", "expires_in": 5183944}
    )
    respx_mock.get(f"{G}/me").respond(200, json={"id": "u1", "name": "Pat Baker"})
    respx_mock.get(f"{G}/me/accounts").respond(200, json={"data": pages})


def _callback(client, slug: str = "ws-a"):
    start = client.post(f"/w/{slug}/connect/facebook/")
    assert start.status_code == 302
    state = parse_qs(urlsplit(start["Location"]).query)["state"][0]
    return client.get("/connect/facebook/callback/", {"state": state, "code": "c0de"})


def _pending_url(respx_mock, client, pages=(BAKERY, CAFE, FAN_CLUB), slug="ws-a") -> str:
    _graph(respx_mock, list(pages))
    response = _callback(client, slug)
    assert response.status_code == 302
    assert response["Location"].startswith(f"/w/{slug}/connect/facebook/choose/")
    return response["Location"]


def test_the_person_chooses_the_page_and_the_page_is_stored(respx_mock, as_alice, workspace_a):
    url = _pending_url(respx_mock, as_alice)
    assert not SocialAccount.objects.exists()  # nothing is stored before the choice

    page = as_alice.get(url)
    html = page.content.decode()
    assert page.status_code == 200
    assert "Choose the Page to publish as" in html
    for name in ("Bakery", "Cafe", "Fan club"):
        assert name in html
    radios = {value: tag for tag, value in re.findall(r'(<input[^>]*value="(\d+)"[^>]*>)', html)}
    assert sorted(radios) == ["1122334455", "777", "999"]
    # Only the Page whose role cannot publish is offered disabled.
    assert [value for value, tag in radios.items() if "disabled" in tag] == ["999"]
    assert "Your role on this Page cannot publish." in html
    assert not [token for token in TOKENS if token in html]

    response = as_alice.post(url, {"choice": "777"})

    assert response.status_code == 302
    assert response["Location"] == "/w/ws-a/accounts/"
    account = SocialAccount.objects.get()
    assert (account.workspace, account.platform) == (workspace_a, "facebook")
    assert (account.remote_id, account.handle, account.display_name) == ("777", "Cafe", "Cafe")
    assert account.status == SocialAccount.Status.CONNECTED
    assert account.token_expires_at is None
    assert account.settings == {"page_id": "777", "connected_by": "u1"}
    assert social_account_credentials(account) == {"access_token": "CAFE-TOKEN"}
    assert b"Connected Cafe on Facebook Pages." in as_alice.get(response["Location"]).content
    # The choice works once.
    assert as_alice.post(url, {"choice": "1122334455"}).status_code == 400
    assert SocialAccount.objects.count() == 1


def test_the_pending_identity_is_sealed_in_the_session(respx_mock, as_alice):
    _pending_url(respx_mock, as_alice)
    row = Session.objects.get(session_key=as_alice.session.session_key)
    decoded = str(row.get_decoded())
    assert connect_pending.SESSION_KEY in decoded
    assert not [token for token in TOKENS if token in row.session_data or token in decoded]


@pytest.mark.parametrize("choice", ["404", "999", "", "u1"])
def test_a_choice_not_offered_is_a_form_error_and_stores_nothing(respx_mock, as_alice, choice):
    url = _pending_url(respx_mock, as_alice)

    response = as_alice.post(url, {"choice": choice})

    assert response.status_code == 400
    assert b'role="alert"' in response.content
    assert b"Choose" in response.content
    assert not SocialAccount.objects.exists()
    # The person can still pick a Page they may publish as.
    assert as_alice.post(url, {"choice": "1122334455"}).status_code == 302
    assert SocialAccount.objects.get().remote_id == "1122334455"


def test_the_pending_choice_belongs_to_its_workspace(respx_mock, as_alice, org_a):
    WorkspaceFactory(organization=org_a, slug="ws-a2")  # alice administers it too
    url = _pending_url(respx_mock, as_alice)

    elsewhere = url.replace("/w/ws-a/", "/w/ws-a2/")
    response = as_alice.post(elsewhere, {"choice": "777"})

    assert response.status_code == 400
    assert b"not started here" in response.content
    assert not SocialAccount.objects.exists()


def test_another_user_cannot_complete_the_pending_choice(
    respx_mock, as_alice, client_factory, workspace_a, workspace_b, bob, charlie
):
    url = _pending_url(respx_mock, as_alice)
    key = url.rstrip("/").rsplit("/", 1)[1]
    taken = as_alice.session[connect_pending.SESSION_KEY]

    # Charlie, admin of another workspace, with the key and even a copy of the session entry.
    other = client_factory(charlie, taken)
    in_his_workspace = f"/w/ws-b/connect/facebook/choose/{key}/"
    assert other.post(in_his_workspace, {"choice": "777"}).status_code == 400
    assert other.post(url, {"choice": "777"}).status_code == 404  # ws-a is not his

    # Dana, another admin of the same workspace, with the same copy: bound to alice.
    dana = UserFactory(email="dana@example.com")
    WorkspaceMembershipFactory(
        workspace=workspace_a, user=dana, role=WorkspaceMembership.Role.ADMIN
    )
    assert client_factory(dana, taken).post(url, {"choice": "777"}).status_code == 400
    # Bob edits in the workspace but does not administer it.
    assert client_factory(bob, taken).post(url, {"choice": "777"}).status_code == 403

    assert not SocialAccount.objects.exists()


def test_an_expired_choice_stores_nothing(respx_mock, as_alice, monkeypatch):
    url = _pending_url(respx_mock, as_alice)
    later = connect_pending.time.time() + connect_pending.TTL_S + 1
    monkeypatch.setattr(connect_pending.time, "time", lambda: later)

    response = as_alice.post(url, {"choice": "777"})

    assert response.status_code == 400
    assert b"expired" in response.content
    assert not SocialAccount.objects.exists()


def test_the_only_page_the_person_can_publish_to_is_connected_at_once(
    respx_mock, as_alice, workspace_a
):
    _graph(respx_mock, [BAKERY, FAN_CLUB])

    response = _callback(as_alice)

    assert response.status_code == 302
    assert response["Location"] == "/w/ws-a/accounts/"
    account = SocialAccount.objects.get(workspace=workspace_a)
    assert (account.remote_id, account.handle) == ("1122334455", "Bakery")
    assert social_account_credentials(account) == {"access_token": "BAKERY-TOKEN"}
    assert b"Connected Bakery on Facebook Pages." in as_alice.get(response["Location"]).content


def test_no_page_the_person_can_publish_to_says_what_to_do(respx_mock, as_alice):
    _graph(respx_mock, [FAN_CLUB])

    response = _callback(as_alice)

    html = response.content.decode()
    assert response.status_code == 400
    assert "Nothing was connected" in html
    assert "role that can create content" in html
    assert "Fan club" in html
    assert 'name="choice"' not in html
    assert not SocialAccount.objects.exists()
    assert not as_alice.session.get(connect_pending.SESSION_KEY)


def test_no_page_granted_at_all_stores_nothing(respx_mock, as_alice):
    _graph(respx_mock, [])

    response = _callback(as_alice)

    assert "No Facebook Page was shared" in response.content.decode()

    assert not SocialAccount.objects.exists()

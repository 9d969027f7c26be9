"""Signing up, logging in and out, resetting a password, the display zone setting, the
workspace switcher and overview, and the API tokens page."""

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from apps.accounts.models import ApiToken, User
from apps.accounts.services import api_token_authenticate
from apps.publishing.services import publication_create
from tests.factories import UserFactory, WorkspaceFactory, WorkspaceMembershipFactory

pytestmark = pytest.mark.django_db


def test_sign_up_logs_in_and_leads_to_creating_an_organization(client):
    response = client.post(
        "/signup/",
        {
            "email": "Dana@Example.com",
            "name": "Dana",
            "password": "a long and unusual passphrase",
            "display_timezone": "America/Chicago",
        },
    )
    assert response["Location"] == "/o/new/"
    user = User.objects.get(email="dana@example.com")
    assert user.display_timezone == "America/Chicago"
    assert client.get("/o/new/").status_code == 200  # logged in


def test_sign_up_explains_what_is_wrong(client, alice):
    response = client.post(
        "/signup/",
        {"email": "alice@example.com", "password": "123", "display_timezone": "Mars/Base"},
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert "An account with this email exists already." in page
    assert "This password is too short." in page
    assert "Select a valid choice." in page


def test_log_in_and_out(client, alice, workspace_a):
    page = client.get("/login/").content.decode()
    assert 'autocomplete="current-password"' in page
    bad = client.post("/login/", {"username": "alice@example.com", "password": "wrong"})
    assert "Your email and password didn't match." in bad.content.decode()
    good = client.post(
        "/login/", {"username": "alice@example.com", "password": "correct horse battery"}
    )
    assert good["Location"] == "/"
    assert client.get("/").url == "/w/ws-a/"
    assert client.post("/logout/").status_code == 302
    assert client.get("/w/ws-a/").status_code == 302


def test_password_reset_mails_a_working_link(client, alice):
    response = client.post("/password-reset/", {"email": "alice@example.com"})
    assert response["Location"] == "/password-reset/sent/"
    [message] = mail.outbox
    link = re.search(r"https?://[^/\s]+(/reset/\S+/)", message.body).group(1)
    form = client.get(link, follow=True)
    assert "Choose a password" in form.content.decode()
    client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "brand new passphrase", "new_password2": "brand new passphrase"},
    )
    assert client.login(username="alice@example.com", password="brand new passphrase")


def test_the_display_zone_changes_how_times_are_shown(as_alice, alice, workspace_a, news):
    publication = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "zoned"}],
        destinations=[{"account": news.pk}],
        scheduled_at="2030-06-01T12:00:00+00:00",
        status="scheduled",
    )
    response = as_alice.post("/settings/", {"name": "Alice", "display_timezone": "Asia/Tokyo"})
    assert response["Location"] == "/settings/"
    alice.refresh_from_db()
    assert alice.display_timezone == "Asia/Tokyo"
    page = as_alice.get(f"/w/ws-a/posts/{publication.pk}/").content.decode()
    assert "Saturday 1 June 2030, 21:00 Asia/Tokyo" in page
    assert "(chosen in UTC)" in page


def test_the_settings_refuse_an_unknown_zone(as_alice):
    response = as_alice.post("/settings/", {"name": "A", "display_timezone": "Nowhere/Land"})
    assert response.status_code == 400


def test_the_switcher_lists_every_workspace_the_user_belongs_to(as_bob, bob, workspace_a):
    elsewhere = WorkspaceFactory(name="Client Z", slug="client-z")
    WorkspaceMembershipFactory(workspace=elsewhere, user=bob, role="viewer")
    WorkspaceFactory(name="Not mine", slug="not-mine")
    page = as_bob.get("/w/ws-a/").content.decode()
    assert 'href="/w/ws-a/" aria-current="true">Workspace A' in page
    assert 'href="/w/client-z/">Client Z' in page
    assert "Not mine" not in page


def test_the_overview_shows_what_needs_attention_and_what_is_coming(
    as_alice, workspace_a, news, alice
):
    publication = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "coming soon"}],
        destinations=[{"account": news.pk}],
        scheduled_at=timezone.now() + timedelta(days=1),
        status="scheduled",
    )
    failed = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "went wrong"}],
        destinations=[{"account": news.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    rendition = failed.renditions.get()
    rendition.mark_publishing()
    rendition.mark_failed({"kind": "content_rejected", "message": "Nope, not this."})
    page = as_alice.get("/w/ws-a/").content.decode()
    assert "coming soon" in page
    assert f'href="/w/ws-a/posts/{publication.pk}/"' in page
    assert "Nope, not this." in page


def test_a_token_is_shown_once_and_works(as_alice, alice, workspace_a):
    response = as_alice.post("/w/ws-a/tokens/new/", {"name": "CI", "scopes": ["read", "publish"]})
    page = response.content.decode()
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    clear = re.search(r'<code id="token-secret">(\S+)</code>', page).group(1)
    token = api_token_authenticate(clear)
    assert token.workspace == workspace_a
    assert token.scopes == ["read", "publish"]
    assert token.created_by == alice
    listing = as_alice.get("/w/ws-a/tokens/").content.decode()
    assert clear not in listing
    assert f"{token.prefix}…" in listing


def test_a_token_needs_a_name_and_a_scope(as_alice):
    response = as_alice.post("/w/ws-a/tokens/new/", {"name": ""})
    assert response.status_code == 400
    assert not ApiToken.objects.exists()


def test_a_revoked_token_stops_working(as_alice, workspace_a):
    as_alice.post("/w/ws-a/tokens/new/", {"name": "CI", "scopes": ["read"]})
    token = ApiToken.objects.get()
    response = as_alice.post(f"/w/ws-a/tokens/{token.pk}/revoke/", follow=True)
    assert "It no longer works." in response.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_pages_carry_no_inline_script_or_style(as_alice, workspace_a, news):
    """The CSP forbids them; htmx and the app's script come from static files."""
    for url in ("/w/ws-a/", "/w/ws-a/compose/", "/w/ws-a/calendar/", "/w/ws-a/accounts/"):
        response = as_alice.get(url)
        page = response.content.decode()
        assert "default-src 'self'" in response["Content-Security-Policy"]
        assert re.search(r"<script(?![^>]*\bsrc=)", page) is None, url
        assert " style=" not in page and "<style" not in page, url
        assert re.search(r"\son[a-z]+=", page) is None, url
        assert "/static/vendor/htmx.min.js" in page


def test_htmx_and_its_license_are_served_by_the_app(client):
    assert client.get("/static/vendor/htmx.min.js").status_code == 200
    assert client.get("/static/vendor/htmx.LICENSE").status_code == 200


def test_a_user_without_workspaces_is_asked_to_create_one(client):
    client.force_login(UserFactory(email="lonely@example.com"))
    response = client.get("/")
    assert response.status_code == 200
    assert 'href="/o/new/"' in response.content.decode()

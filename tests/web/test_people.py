"""Signing up and confirming the address, logging in and out, resetting a password, the
display zone setting, the workspace switcher and overview, and the API tokens page."""

import re
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.test import Client
from django.utils import timezone

from apps.accounts import invitations
from apps.accounts.models import ApiToken, Invitation, User, WorkspaceMembership
from apps.accounts.services import api_token_authenticate
from apps.publishing.services import publication_create
from tests.factories import UserFactory, WorkspaceFactory, WorkspaceMembershipFactory

pytestmark = pytest.mark.django_db


def verify_path(message) -> str:
    return re.search(r"https?://[^/\s]+(/verify-email/[^/\s]+/)", message.body).group(1)


def sign_up(client, email="Dana@Example.com", **extra):
    return client.post(
        "/signup/",
        {
            "email": email,
            "name": "Dana",
            "password": "a long and unusual passphrase",
            "display_timezone": "America/Chicago",
            **extra,
        },
    )


PASSPHRASE = "a long and unusual passphrase"


def log_in(client, email="dana@example.com"):
    assert client.login(username=email, password=PASSPHRASE)


def test_sign_up_asks_to_confirm_the_address_then_log_in(
    client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = sign_up(client)
    assert response["Location"] == "/signup/sent/"
    sent = client.get("/signup/sent/").content.decode()
    assert "Check your email" in sent and "dana@example.com" in sent
    user = User.objects.get(email="dana@example.com")
    assert user.display_timezone == "America/Chicago"
    assert not user.is_email_verified
    assert client.get("/")["Location"].startswith("/login/")  # not signed in by the form
    log_in(client)
    page = client.get("/verify-email/").content.decode()
    assert "Check your email" in page and "dana@example.com" in page
    assert client.get("/").url == "/verify-email/"
    assert client.get("/o/new/").url == "/verify-email/"  # nothing to create yet

    [message] = mail.outbox
    response = client.get(verify_path(message), follow=True)
    assert "dana@example.com is confirmed" in response.content.decode()
    assert response.redirect_chain[-1][0] == "/"
    assert client.get("/o/new/").status_code == 200
    user.refresh_from_db()
    assert user.is_email_verified


def test_signing_up_with_a_known_address_answers_the_same_and_tells_its_owner(
    client, alice, django_capture_on_commit_callbacks
):
    """Nobody learns from the signup form which addresses have an account: the answer is
    the same, and only the mailbox's owner hears about the attempt."""
    with django_capture_on_commit_callbacks(execute=True):
        new = sign_up(Client())
    with django_capture_on_commit_callbacks(execute=True):
        known = sign_up(client, email="Alice@Example.com")
    assert (known.status_code, known["Location"]) == (new.status_code, new["Location"])
    new_page = Client()
    sign_up(new_page, email="someone.else@example.com")

    def page(c, email):  # without what differs by nature: the address, the CSRF token
        text = c.get("/signup/sent/").content.decode().replace(email, "X")
        return re.sub(r'"X-CSRFToken": "[^"]+"', "", text)

    assert page(client, "alice@example.com") == page(new_page, "someone.else@example.com")

    assert User.objects.filter(email__iexact="alice@example.com").count() == 1
    alice.refresh_from_db()
    assert alice.check_password("correct horse battery")  # nothing changed
    notice = mail.outbox[-1]
    assert notice.to == ["alice@example.com"]
    assert "which has\none already" in notice.body
    assert "http://testserver" not in notice.body  # links from SITE_URL, not the Host header
    assert re.search(r"https?://\S+/login/", notice.body)
    assert re.search(r"https?://\S+/password-reset/", notice.body)

    # Asked again at once: the same answer, no second note.
    with django_capture_on_commit_callbacks(execute=True):
        again = sign_up(Client(), email="alice@example.com")
    assert again["Location"] == "/signup/sent/"
    assert len([m for m in mail.outbox if m.to == ["alice@example.com"]]) == 1


def test_the_confirmation_link_asks_to_log_in_to_its_account(
    client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        sign_up(client)
    link = verify_path(mail.outbox[0])
    stranger = Client()
    response = stranger.get(link)
    assert response["Location"].startswith("/login/?next=/verify-email/")
    assert not User.objects.get(email="dana@example.com").is_email_verified


def test_a_new_confirmation_link_is_sent_on_request(client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        sign_up(client)
    log_in(client)
    with django_capture_on_commit_callbacks(execute=True):
        soon = client.post("/verify-email/", follow=True)
    assert "A confirmation email went out a moment ago" in soon.content.decode()
    assert len(mail.outbox) == 1
    with (
        time_machine.travel(timezone.now() + timedelta(minutes=2)),
        django_capture_on_commit_callbacks(execute=True),
    ):
        later = client.post("/verify-email/", follow=True)
    assert "Sent a new confirmation link to dana@example.com" in later.content.decode()
    assert len(mail.outbox) == 2


def test_a_broken_confirmation_link_is_explained(client):
    response = client.get("/verify-email/not-a-token/")
    assert response.status_code == 400
    assert "This confirmation link is not valid" in response.content.decode()


def test_signing_up_with_someone_elses_address_does_not_reach_their_invitations(
    client, alice, workspace_a, django_capture_on_commit_callbacks
):
    """Mallory signs up as victim@example.com, who has an invitation waiting: she sees
    none of it, cannot accept it, and the confirmation link goes to the victim's inbox."""
    with django_capture_on_commit_callbacks(execute=True):
        invitations.invitation_create(
            organization=workspace_a.organization,
            email="victim@example.com",
            role="editor",
            invited_by=alice,
            workspace=workspace_a,
        )
    invitation = Invitation.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        sign_up(client, email="victim@example.com")
    log_in(client, "victim@example.com")

    welcome = client.get("/", follow=True).content.decode()
    assert "Workspace A" not in welcome
    assert client.post(f"/invitations/join/{invitation.pk}/")["Location"] == "/verify-email/"
    assert client.get("/w/ws-a/").status_code == 404
    assert all(m.to == ["victim@example.com"] for m in mail.outbox)
    assert not WorkspaceMembership.objects.filter(user__email="victim@example.com").exists()

    # The victim resets the password: the address is theirs again, Mallory is logged out.
    victim = Client()
    with django_capture_on_commit_callbacks(execute=True):
        victim.post("/password-reset/", {"email": "victim@example.com"})
    link = re.search(r"https?://[^/\s]+(/reset/\S+/)", mail.outbox[-1].body).group(1)
    form = victim.get(link, follow=True)
    victim.post(
        form.redirect_chain[-1][0],
        {"new_password1": "the victim's own phrase", "new_password2": "the victim's own phrase"},
    )
    assert User.objects.get(email="victim@example.com").is_email_verified
    assert client.get("/")["Location"].startswith("/login/")  # Mallory's session ended
    assert victim.login(username="victim@example.com", password="the victim's own phrase")
    page = victim.get("/").content.decode()
    assert "Workspace A" in page
    victim.post(f"/invitations/join/{invitation.pk}/")
    assert WorkspaceMembership.objects.get(user__email="victim@example.com").role == "editor"


def test_someone_who_never_set_a_password_can_reset_it(client):
    User.objects.create_user(email="invitee@example.com", password=None)
    response = client.post("/password-reset/", {"email": "invitee@example.com"})
    assert response["Location"] == "/password-reset/sent/"
    [message] = mail.outbox
    assert message.to == ["invitee@example.com"]
    link = re.search(r"https?://[^/\s]+(/reset/\S+/)", message.body).group(1)
    form = client.get(link, follow=True)
    client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "my first passphrase", "new_password2": "my first passphrase"},
    )
    assert client.login(username="invitee@example.com", password="my first passphrase")


def test_sign_up_explains_what_is_wrong(client, alice):
    response = client.post(
        "/signup/",
        {"email": "alice@example.com", "password": "123", "display_timezone": "Mars/Base"},
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert "exists already" not in page  # never said (see the known-address test)
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


def test_a_verified_user_without_workspaces_sees_the_invitations_waiting(
    client, alice, workspace_a
):
    invitations.invitation_create(
        organization=workspace_a.organization,
        email="lonely@example.com",
        role="viewer",
        invited_by=alice,
        workspace=workspace_a,
    )
    lonely = UserFactory(email="lonely@example.com")
    client.force_login(lonely)
    page = client.get("/").content.decode()
    assert "Invitations for lonely@example.com" in page
    invitation = Invitation.objects.get()
    response = client.post(f"/invitations/join/{invitation.pk}/")
    assert response["Location"] == "/w/ws-a/"
    assert WorkspaceMembership.objects.get(user=lonely).role == "viewer"

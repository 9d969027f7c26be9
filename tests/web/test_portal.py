"""The client portal over HTTP: the page a link opens (each post per destination, nothing
else of the workspace), the client's decisions, refusals of bad links, the rate limit; and
the members' page that makes, lists and revokes links."""

import re
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.approvals.models import PortalLink, Review
from apps.approvals.portal import portal_link_create
from apps.audit.models import AuditEvent
from apps.publications.models import Publication
from apps.publishing.services.publications import publication_create
from apps.publishing.services.reviews import review_submit
from apps.sandbox.services import sandbox_account_create
from tests.factories import MediaAssetFactory

pytestmark = pytest.mark.django_db


def in_review(workspace, author, account, text):
    draft = publication_create(
        workspace=workspace,
        author=author,
        segments=[{"text": text}, {"text": f"{text}, part two"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now() + timedelta(days=2),
        first_comment="Shop the look at example.com",
    )
    review_submit(publication=draft, expected_revision=draft.revision, actor=author)
    draft.refresh_from_db()
    return draft


@pytest.fixture
def post(workspace_a, bob, news):
    return in_review(workspace_a, bob, news, "Autumn collection")


@pytest.fixture
def link(workspace_a, alice):
    link, token = portal_link_create(
        workspace=workspace_a,
        actor=alice,
        label="Acme marketing",
        expires_at=timezone.now() + timedelta(days=7),
    )
    return link, f"/portal/{token}/"


def test_the_page_shows_each_post_as_it_will_go_out_and_nothing_else(
    client, link, post, workspace_b, charlie
):
    b_account = sandbox_account_create(workspace=workspace_b, handle="b-news")
    in_review(workspace_b, charlie, b_account, "Workspace B secret plan")

    response = client.get(link[1])

    assert response.status_code == 200
    page = response.content.decode()
    for shown in ("Autumn collection", "Autumn collection, part two", "@news"):
        assert shown in page
    assert "Shop the look at example.com" in page  # the first comment
    assert "Waiting for you" in page
    assert "Workspace B secret plan" not in page
    assert "bob@example.com" not in page and "/w/ws-a/" not in page
    assert response["Cache-Control"] == "no-store, private"
    assert response["Referrer-Policy"] == "same-origin"
    assert AuditEvent.objects.filter(
        action="portal.viewed", actor_label="Client link: Acme marketing"
    )


def test_bad_links_are_refused(client, link, alice):
    token = link[1].split("/")[2]
    assert client.get(f"/portal/{token[:-2]}xx/").status_code == 404
    PortalLink.objects.filter(pk=link[0].pk).update(expires_at=timezone.now())
    assert client.get(link[1]).status_code == 410


def test_a_client_approves_and_the_post_is_scheduled(client, link, post, as_alice):
    response = client.post(
        f"{link[1]}posts/{post.pk}/",
        {"decision": "approve", "note": "Perfect", "revision": post.revision},
    )

    assert response.status_code == 302
    post.refresh_from_db()
    assert post.status == Publication.Status.SCHEDULED
    review = Review.objects.get(publication=post)
    assert (review.state, review.decided_via_id) == ("approved", link[0].pk)
    page = client.get(link[1]).content.decode()
    assert "Approved: thank you" in page
    assert 'id="review-client-bound"' in as_alice.get(f"/w/ws-a/posts/{post.pk}/").content.decode()


def test_a_client_asks_for_changes_and_a_stale_revision_is_refused(client, link, post):
    url = f"{link[1]}posts/{post.pk}/"
    stale = client.post(url, {"decision": "approve", "revision": post.revision - 1}, follow=True)
    assert "changed while you were looking at it" in stale.content.decode()
    assert Review.objects.get(publication=post).state == "in_review"

    client.post(url, {"decision": "changes", "note": "Brighter photo", "revision": post.revision})

    assert Review.objects.get(publication=post).state == "changes_requested"


def test_a_post_of_another_workspace_cannot_be_decided(client, link, workspace_b, charlie):
    b_account = sandbox_account_create(workspace=workspace_b, handle="b-news")
    foreign = in_review(workspace_b, charlie, b_account, "B's")

    response = client.post(
        f"{link[1]}posts/{foreign.pk}/", {"decision": "approve", "revision": foreign.revision}
    )

    assert response.status_code == 404
    assert Review.objects.get(publication=foreign).state == "in_review"


def test_the_portal_is_rate_limited_per_address(client, link, settings):
    settings.CLIENT_PORTAL_RATE_LIMIT = "2/min"

    answers = [client.get(link[1]).status_code for _ in range(3)]
    guessed = client.get("/portal/guess/")

    assert answers == [200, 200, 429]
    assert guessed.status_code == 429  # counted before the token is read
    assert "Retry-After" in guessed


def test_an_admin_makes_sees_and_revokes_a_link(as_alice, post):
    response = as_alice.post(
        "/w/ws-a/reviews/links/new/",
        {"label": "Acme", "days": "5", "publications": [str(post.pk)]},
    )

    assert response.status_code == 201
    url = re.search(r'id="portal-url">([^<]+)<', response.content.decode()).group(1)
    link = PortalLink.objects.get()
    assert list(link.publications.all()) == [post]
    assert Client().get(urlsplit(url).path).status_code == 200
    listed = as_alice.get("/w/ws-a/reviews/links/").content.decode()
    assert "Acme" in listed and url not in listed  # the address is shown once

    as_alice.post(f"/w/ws-a/reviews/links/{link.pk}/revoke/")

    link.refresh_from_db()
    assert link.revoked_at is not None


def test_a_viewer_or_editor_cannot_make_or_revoke_links(as_vera, as_bob, as_charlie, link):
    for person in (as_vera, as_bob):
        assert (
            person.post("/w/ws-a/reviews/links/new/", {"label": "x", "days": "3"}).status_code
            == 403
        )
        assert person.post(f"/w/ws-a/reviews/links/{link[0].pk}/revoke/").status_code == 403
    assert as_charlie.get("/w/ws-a/reviews/links/").status_code == 404
    assert PortalLink.objects.count() == 1
    assert PortalLink.objects.get().revoked_at is None


def test_the_link_form_refuses_what_it_cannot_use(as_alice):
    for fields in (
        {"label": "", "days": "5"},
        {"label": "Acme", "days": "91"},
        {"label": "Acme", "days": "5", "period_end": "9999-12-31"},
        {"label": "Acme", "days": "5", "period_start": "2030-01-02", "period_end": "2030-01-01"},
    ):
        assert as_alice.post("/w/ws-a/reviews/links/new/", fields).status_code == 400, fields
    assert not PortalLink.objects.exists()


def test_a_post_in_review_is_shared_from_its_page(as_alice, post):
    page = as_alice.get(f"/w/ws-a/posts/{post.pk}/").content.decode()
    share = f"/w/ws-a/reviews/links/?post={post.pk}"
    assert share in page

    form = as_alice.get(share).content.decode()

    assert re.search(rf'value="{post.pk}"[^>]*checked', form)


def test_a_client_puts_a_post_on_hold_and_an_admin_can_release_it(client, link, post, as_alice):
    assert 'value="hold"' in client.get(link[1]).content.decode()

    client.post(f"{link[1]}posts/{post.pk}/", {"decision": "hold", "revision": post.revision})

    assert Review.objects.get(publication=post).state == "on_hold"
    page = as_alice.get(f"/w/ws-a/posts/{post.pk}/").content.decode()
    assert "Acme marketing" in page and "put it on hold" in page
    post.refresh_from_db()
    as_alice.post(f"/w/ws-a/posts/{post.pk}/review/approve/", {"revision": post.revision})
    post.refresh_from_db()
    assert post.status == Publication.Status.SCHEDULED


def test_an_admin_puts_a_post_in_review_on_hold(as_alice, post):
    as_alice.post(f"/w/ws-a/posts/{post.pk}/review/hold/", {"revision": post.revision})

    review = Review.objects.get(publication=post)
    assert (review.state, review.decided_via) == ("on_hold", None)


@pytest.fixture
def client_approved(client, link, post):
    client.post(f"{link[1]}posts/{post.pk}/", {"decision": "approve", "revision": post.revision})
    post.refresh_from_db()
    assert post.status == Publication.Status.SCHEDULED
    return post


def test_moving_a_post_a_client_approved_says_it_went_back_to_them(as_alice, client_approved):
    post = client_approved
    later = post.scheduled_at + timedelta(days=1)
    fields = {"date": later.date().isoformat(), "time": "10:00", "revision": post.revision}

    moved = as_alice.post(f"/w/ws-a/calendar/move/{post.pk}/", fields)

    assert moved.status_code == 200
    assert "sent it back to them" in moved.json()["message"]
    post.refresh_from_db()
    assert post.status == Publication.Status.DRAFT
    assert Review.objects.get(publication=post).state == "in_review"


def test_the_reschedule_form_says_so_too(as_alice, client_approved):
    post = client_approved
    later = post.scheduled_at + timedelta(days=1)
    fields = {"date": later.date().isoformat(), "time": "10:00", "revision": post.revision}

    answer = as_alice.post(f"/w/ws-a/posts/{post.pk}/reschedule/", fields, follow=True)

    assert "sent it back to them" in answer.content.decode()


def test_media_show_through_signed_urls_with_each_destinations_alt_text(
    client, link, workspace_a, bob, news
):
    asset = MediaAssetFactory(workspace=workspace_a, alt_text="A red bicycle")
    draft = publication_create(
        workspace=workspace_a,
        author=bob,
        segments=[{"text": "Look", "media": [{"id": asset.pk, "alt_text": "Our new bike"}]}],
        destinations=[{"account": news.pk}],
        scheduled_at=timezone.now() + timedelta(days=1),
    )
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob)

    page = client.get(link[1]).content.decode()

    src = re.search(r'<img src="([^"]+)" alt="Our new bike"', page).group(1)
    assert "/media/signed/" in src and f"/media/{asset.pk}/" not in page
    served = client.get(urlsplit(src).path)
    assert served.status_code == 200
    assert b"".join(served.streaming_content).startswith(b"\x89PNG")


def test_the_page_costs_the_same_queries_for_one_post_or_many(client, link, post, bob, news):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(link[1]).status_code == 200
        return len(captured.captured_queries)

    queries()  # the first request of a rate-limit window also clears ended windows
    one = queries()
    for n in range(4):
        in_review(post.workspace, bob, news, f"More {n}")

    assert queries() == one

"""One truthful word per state, whichever page shows it: a post whose outcome is unknown
"Needs attention" on the overview as on its own page (never "Failed", which invites the
re-post that makes a duplicate); "Needs approval" only on a draft that still needs it; a
destination's tries and its delivery record count different things and say so; a post a
person resolved as published shows when it was sent and who confirmed it, not the
resolution's time as its publish time, nor the link typed as its post id."""

import zoneinfo
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.approvals.models import ApprovalRule
from apps.publications.models import Publication
from apps.publishing.services import publication_create, publication_refresh_status
from apps.renditions.models import DeliveryAttempt, Rendition

pytestmark = pytest.mark.django_db


def _post(workspace, author, account, *, status="scheduled"):
    return publication_create(
        workspace=workspace,
        author=author,
        segments=[{"text": "Words of the post"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now() + timedelta(hours=3),
        status=status,
    )


def _record(rendition: Rendition, kind: str, outcome: str) -> None:
    DeliveryAttempt.objects.create(
        rendition=rendition,
        workspace_id=rendition.workspace_id,
        kind=kind,
        outcome=outcome,
        finished_at=timezone.now(),
    )


def _unknown_outcome(publication: Publication) -> Rendition:
    rendition = publication.renditions.get()
    rendition.mark_publishing()
    rendition.mark_failed(
        {"kind": "timeout", "message": "No answer.", "action": "resolve"}, ambiguous=True
    )
    publication_refresh_status(publication)
    _record(rendition, "publish", "unknown")
    return rendition


def test_the_overview_says_needs_attention_for_an_unknown_outcome(
    as_alice, alice, workspace_a, news
):
    publication = _post(workspace_a, alice, news)
    _unknown_outcome(publication)
    publication.refresh_from_db()
    assert publication.status == Publication.Status.FAILED

    page = as_alice.get("/w/ws-a/").content.decode()

    recent = page[page.index('id="recent-heading"') :]
    recent = recent[: recent.index("</section>")]
    assert "Needs attention" in recent and "Failed" not in recent
    assert "status-needs_attention" in recent


def test_needs_approval_shows_on_a_draft_and_not_on_a_post_past_it(
    as_bob, alice, bob, workspace_a, news
):
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    draft = _post(workspace_a, bob, news, status="draft")
    published = _post(workspace_a, alice, news)
    rendition = published.renditions.get()
    rendition.mark_publishing()
    rendition.mark_published("1", "https://example.com/1")
    publication_refresh_status(published)

    assert "Needs approval" in as_bob.get(f"/w/ws-a/posts/{draft.pk}/").content.decode()
    page = as_bob.get(f"/w/ws-a/posts/{published.pk}/").content.decode()
    assert "Needs approval" not in page
    assert "Not reviewed" in page


def test_a_destinations_tries_and_its_delivery_record_say_what_they_count(
    as_alice, alice, workspace_a, news
):
    publication = _post(workspace_a, alice, news)
    rendition = _unknown_outcome(publication)
    _record(rendition, "reconcile", "failed")
    _record(rendition, "reconcile", "failed")

    page = as_alice.get(f"/w/ws-a/posts/{publication.pk}/").content.decode()

    assert "<dt>Publish tries</dt>" in page and "<dt>Attempts</dt>" not in page
    assert "Delivery record (3 entries: 1 publish attempt, 2 lookups)" in page
    assert "3 attempts" not in page


def test_a_post_resolved_as_published_says_when_it_was_sent_and_who_confirmed_it(
    as_alice, alice, workspace_a, news
):
    publication = _post(workspace_a, alice, news)
    rendition = _unknown_outcome(publication)
    sent = rendition.delivery_attempts.get().started_at
    link = "https://sandbox.example/@news/9"

    response = as_alice.post(
        f"/w/ws-a/posts/{publication.pk}/destinations/{rendition.pk}/resolve/",
        {"outcome": "published", "provider_url": link},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200

    page = as_alice.get(f"/w/ws-a/posts/{publication.pk}/").content.decode()
    facts = page[page.index('<dl class="facts">') :]
    facts = facts[: facts.index("</dl>")]
    # The resolution's time is not the publish time, and the link typed is not a post id.
    assert "<dt>Post id</dt>" not in facts
    shown = sent.astimezone(zoneinfo.ZoneInfo(alice.display_timezone))
    assert f"sent {shown:%a %-d %b %Y, %H:%M}" in facts
    assert f"confirmed by {alice.email} on " in facts

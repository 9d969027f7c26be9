"""A post's page: each destination's status, error and action; manual retry; resolving
unknown outcomes; live updates by polling; cancel; and the quick reschedule with its
revision check."""

import zoneinfo
from datetime import datetime, time, timedelta

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.publications.models import Publication
from apps.publishing.services import (
    publication_create,
    publication_refresh_status,
    publication_reschedule,
    publication_update,
)
from apps.renditions.models import DeliveryAttempt, Rendition

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def publication(workspace_a, news, short, alice):
    return publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "hello world"}],
        destinations=[{"account": news.pk}, {"account": short.pk}],
        scheduled_at=timezone.now() + timedelta(hours=3),
        status="scheduled",
    )


def rendition_of(publication, account) -> Rendition:
    return publication.renditions.get(social_account=account)


def fail(rendition: Rendition, *, kind: str, action: str, ambiguous=False, retry_at=None):
    rendition.mark_publishing()
    rendition.mark_failed(
        {
            "kind": kind,
            "code": "E42",
            "http_status": 422,
            "message": f"The platform said no ({kind}).",
            "action": action,
        },
        retry_at=retry_at,
        ambiguous=ambiguous,
    )
    DeliveryAttempt.objects.create(
        rendition=rendition,
        workspace_id=rendition.workspace_id,
        kind="publish",
        outcome="unknown" if ambiguous else "failed",
        error=rendition.last_error,
        finished_at=timezone.now(),
    )


def url(publication, suffix: str = "") -> str:
    return f"/w/ws-a/posts/{publication.pk}/{suffix}"


def card_url(publication, rendition, suffix: str = "") -> str:
    return url(publication, f"destinations/{rendition.pk}/{suffix}")


def test_it_shows_each_destinations_status_error_and_action(as_alice, publication, news, short):
    fail(rendition_of(publication, short), kind="content_rejected", action="edit")
    page = as_alice.get(url(publication)).content.decode()
    assert "Sandbox @news" in page
    assert 'data-status="scheduled"' in page
    assert "Content rejected" in page
    assert "HTTP 422" in page
    assert "The platform said no (content_rejected)." in page
    assert 'data-action="edit">Edit the post</span>' in page
    assert "Retry now" in page
    assert "Delivery record (1 entry: 1 publish attempt)" in page
    assert "hello world" in page


def test_an_expired_account_makes_reconnect_the_primary_action(as_alice, publication, short):
    fail(rendition_of(publication, short), kind="auth_expired", action="reconnect")
    short.status = "needs_reconnect"
    short.save()
    page = as_alice.get(url(publication)).content.decode()
    assert (
        f'<a class="button" data-primary="reconnect" href="/w/ws-a/accounts/#account-{short.pk}">'
        "Reconnect @short</a>"
    ) in page
    # Retrying before reconnecting fails again: it is there, but secondary.
    assert '<button type="submit" class="secondary">Retry now' in page


def test_once_reconnected_retry_is_the_primary_action_again(as_alice, publication, short):
    fail(rendition_of(publication, short), kind="auth_expired", action="reconnect")
    page = as_alice.get(url(publication)).content.decode()
    assert 'data-primary="reconnect"' not in page
    assert '<button type="submit">Retry now' in page


def test_a_pending_automatic_retry_shows_its_time(as_alice, alice, publication, short):
    alice.display_timezone = "Asia/Tokyo"
    alice.save()
    retry_at = timezone.now() + timedelta(minutes=30)
    fail(rendition_of(publication, short), kind="rate_limited", action="wait", retry_at=retry_at)
    page = as_alice.get(url(publication)).content.decode()
    local = retry_at.astimezone(zoneinfo.ZoneInfo("Asia/Tokyo"))
    assert f"{local:%H:%M:%S} Asia/Tokyo" in page
    assert "Wait: it is retried automatically" in page
    assert "Failed, retry pending" in page


def test_manual_retry_reschedules_the_destination_now(as_alice, publication, short):
    rendition = rendition_of(publication, short)
    fail(rendition, kind="content_rejected", action="edit")
    response = as_alice.post(card_url(publication, rendition, "retry/"), **HTMX)
    page = response.content.decode()
    assert response.status_code == 200
    assert "Retrying now." in page
    assert 'data-status="scheduled"' in page
    assert 'hx-trigger="every 2s"' in page  # due now: it polls until it settles
    assert 'id="publication-head" hx-swap-oob="true"' in page
    rendition.refresh_from_db()
    assert (rendition.status, rendition.manual_retry_count) == ("scheduled", 1)
    assert Job.objects.get(dedupe_key=f"publish:{rendition.pk}").status == "pending"


def test_a_refused_retry_says_why(as_alice, publication, news):
    response = as_alice.post(card_url(publication, rendition_of(publication, news), "retry/"))
    assert response.status_code == 302
    page = as_alice.get(response["Location"]).content.decode()
    assert "Only a failed destination can be retried; this one is scheduled." in page


def test_an_unknown_outcome_is_resolved_as_published_with_its_link(as_alice, publication, short):
    rendition = rendition_of(publication, short)
    fail(rendition, kind="outcome_unknown", action="verify", ambiguous=True)
    page = as_alice.get(url(publication)).content.decode()
    assert "Needs attention: unknown outcome" in page
    assert "the post may exist" in page
    assert "Retry now" not in page  # never blindly resent
    assert 'name="outcome"' in page

    response = as_alice.post(
        card_url(publication, rendition, "resolve/"),
        {"outcome": "published", "provider_url": "https://sandbox.example/@short/9"},
        **HTMX,
    )
    assert response.status_code == 200
    assert "Recorded as published." in response.content.decode()
    rendition.refresh_from_db()
    assert rendition.status == "published"
    assert rendition.provider_url == "https://sandbox.example/@short/9"


def test_resolving_as_published_needs_the_link(as_alice, publication, short):
    rendition = rendition_of(publication, short)
    fail(rendition, kind="outcome_unknown", action="verify", ambiguous=True)
    response = as_alice.post(
        card_url(publication, rendition, "resolve/"), {"outcome": "published"}, **HTMX
    )
    assert response.status_code == 400
    assert "Give the post&#x27;s link when it was published." in response.content.decode()
    rendition.refresh_from_db()
    assert rendition.ambiguous


def test_resolving_as_retry_sends_it_again(as_alice, publication, short):
    rendition = rendition_of(publication, short)
    fail(rendition, kind="outcome_unknown", action="verify", ambiguous=True)
    as_alice.post(card_url(publication, rendition, "resolve/"), {"outcome": "retry"})
    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == ("scheduled", False)


@pytest.mark.parametrize(
    ("status", "due_in", "poll"),
    [
        ("publishing", None, "every 2s"),
        ("scheduled", timedelta(seconds=30), "every 2s"),
        ("scheduled", timedelta(minutes=20), "every 30s"),
        ("scheduled", timedelta(days=2), None),
        ("published", None, None),
    ],
)
def test_a_card_polls_only_while_something_may_change_soon(
    as_alice, publication, news, status, due_in, poll
):
    rendition = rendition_of(publication, news)
    if due_in is not None:
        publication_reschedule(
            publication=publication, expected_revision=1, scheduled_at=timezone.now() + due_in
        )
    if status == "publishing":
        rendition.mark_publishing()
    if status == "published":
        rendition.mark_publishing()
        rendition.mark_published("1", "https://sandbox.example/1")
    page = as_alice.get(card_url(publication, rendition), **HTMX).content.decode()
    if poll:
        assert f'hx-trigger="{poll}"' in page
    else:
        assert "hx-trigger" not in page


def test_a_polled_card_sends_the_page_head_only_when_the_post_changed(as_alice, publication, news):
    rendition = rendition_of(publication, news)
    seen = f"{publication.status}:{publication.revision}"
    same = as_alice.get(card_url(publication, rendition), {"seen": seen}, **HTMX)
    assert "publication-head" not in same.content.decode()
    changed = as_alice.get(card_url(publication, rendition), {"seen": "draft:1"}, **HTMX)
    assert 'id="publication-head" hx-swap-oob="true"' in changed.content.decode()


def test_cancel_stops_what_has_not_gone_out(as_alice, publication, news):
    rendition = rendition_of(publication, news)
    response = as_alice.post(url(publication, "cancel/"), follow=True)
    assert "Cancelled what had not gone out." in response.content.decode()
    publication.refresh_from_db()
    rendition.refresh_from_db()
    assert publication.status == "cancelled"
    assert rendition.status == "cancelled"


def test_retry_all_failed_destinations(as_alice, publication, news, short):
    for account in (news, short):
        fail(rendition_of(publication, account), kind="provider_unavailable", action="wait")
    page = as_alice.get(url(publication)).content.decode()
    assert "Retry all failed" in page
    response = as_alice.post(url(publication, "retry/"), follow=True)
    assert "Retrying 2 destination(s) now." in response.content.decode()
    assert set(publication.renditions.values_list("status", flat=True)) == {"scheduled"}


def test_reschedule_moves_the_post_in_the_users_zone(as_alice, alice, publication):
    alice.display_timezone = "America/New_York"
    alice.save()
    day = (timezone.now() + timedelta(days=5)).date()
    response = as_alice.post(
        url(publication, "reschedule/"),
        {
            "date": day.isoformat(),
            "time": "08:15",
            "revision": publication.revision,
            "next": "/w/ws-a/calendar/",
        },
        **HTMX,
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/w/ws-a/calendar/"
    publication.refresh_from_db()
    zone = zoneinfo.ZoneInfo("America/New_York")
    assert publication.scheduled_at == datetime.combine(day, time(8, 15), zone)
    job = Job.objects.get(dedupe_key=f"publish:{publication.renditions.first().pk}")
    assert job.run_at == publication.scheduled_at


def test_a_stale_reschedule_is_not_saved_and_keeps_the_new_time(as_alice, publication):
    before = publication.scheduled_at
    publication_update(
        publication=publication, expected_revision=1, segments=[{"text": "edited meanwhile"}]
    )
    day = (timezone.now() + timedelta(days=9)).date()
    response = as_alice.post(
        url(publication, "reschedule/"),
        {"date": day.isoformat(), "time": "07:45", "revision": "1"},
        **HTMX,
    )
    page = response.content.decode()
    assert response.status_code == 409
    assert "Someone changed this post after you opened it" in page
    assert f'value="{day.isoformat()}"' in page
    assert 'value="07:45"' in page
    assert 'name="revision" value="2"' in page
    publication.refresh_from_db()
    assert publication.scheduled_at == before


def test_reschedule_refuses_a_time_long_past(as_alice, publication):
    response = as_alice.post(
        url(publication, "reschedule/"),
        {"date": "2020-01-01", "time": "10:00", "revision": publication.revision},
    )
    assert response.status_code == 400
    # Said in the person's zone (UTC here), not as the service's ISO instant.
    assert "Wed 01 Jan 2020 at 10:00 (UTC) has passed." in response.content.decode()


def test_an_open_redirect_is_not_followed_after_rescheduling(as_alice, publication):
    day = (timezone.now() + timedelta(days=1)).date().isoformat()
    response = as_alice.post(
        url(publication, "reschedule/"),
        {"date": day, "time": "10:00", "revision": "1", "next": "https://evil.example/"},
    )
    assert response["Location"] == url(publication)


# --- what each destination got ----------------------------------------------------------


def test_the_page_shows_what_each_destination_got_with_each_parts_link(
    as_alice, workspace_a, alice, news, short
):
    publication = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "first part"}, {"text": "second part"}],
        destinations=[
            {"account": news.pk},
            {"account": short.pk, "segments": [{"text": "short's own"}]},
        ],
        scheduled_at=timezone.now() + timedelta(hours=1),
        status="scheduled",
    )
    rendition = rendition_of(publication, news)
    rendition.mark_publishing()
    for segment in rendition.segments.order_by("position"):
        segment.mark_published(
            f"p{segment.position}", f"https://sandbox.example/@news/{segment.position}"
        )
    rendition.mark_published("p0", "https://sandbox.example/@news/0")
    page = as_alice.get(url(publication)).content.decode()
    assert "What @news got</summary>" in page
    assert 'href="https://sandbox.example/@news/1"' in page
    assert "View part 2 on Sandbox" in page
    assert "What @short will get <span" in page
    assert '<p class="sent-text">short&#x27;s own</p>' in page


# --- edit a refused destination's text and retry ----------------------------------------


@pytest.fixture
def rejected(publication, short):
    rendition = rendition_of(publication, short)
    fail(rendition, kind="content_rejected", action="edit")
    return rendition


def test_a_rejected_destination_offers_edit_and_retry_and_copy(as_alice, publication, rejected):
    page = as_alice.get(url(publication)).content.decode()
    assert f'href="{card_url(publication, rejected, "edit-retry/")}"' in page
    assert "Edit this destination's text and retry" in page
    assert f'href="/w/ws-a/compose/?copy={publication.pk}">Copy to a new post</a>' in page


def test_a_failure_that_is_not_about_the_content_offers_no_text_edit(as_alice, publication, short):
    fail(rendition_of(publication, short), kind="rate_limited", action="wait")
    page = as_alice.get(url(publication)).content.decode()
    assert "edit-retry/" not in page
    assert "Copy to a new post" not in page


def test_edit_and_retry_saves_the_destinations_own_text_and_retries_it(
    as_alice, publication, rejected, news
):
    edit = card_url(publication, rejected, "edit-retry/")
    form_page = as_alice.get(edit).content.decode()
    assert ">hello world</textarea>" in form_page  # what it was sent
    assert "Sandbox refused it:</strong> The platform said no (content_rejected)." in form_page

    response = as_alice.post(edit, {"part-0": "hi, shorter", "revision": publication.revision})
    assert response.status_code == 302
    assert response["Location"] == url(publication)
    rejected.refresh_from_db()
    assert rejected.status == "scheduled"
    assert rejected.overrides_content
    assert rejected.manual_retry_count == 1
    assert [s.text for s in rejected.segments.all()] == ["hi, shorter"]
    assert Job.objects.filter(dedupe_key=f"publish:{rejected.pk}", status="pending").exists()
    other = rendition_of(publication, news)
    assert [s.text for s in other.segments.all()] == ["hello world"]
    assert not other.overrides_content
    publication.refresh_from_db()
    assert publication.revision == 2
    follow = as_alice.get(url(publication)).content.decode()
    assert "Saved the new text for @short and sending it now." in follow


def test_edit_and_retry_works_beside_a_destination_that_went_out(
    as_alice, publication, rejected, news
):
    published = rendition_of(publication, news)
    published.mark_publishing()
    published.mark_published("n1", "https://sandbox.example/@news/1")
    response = as_alice.post(
        card_url(publication, rejected, "edit-retry/"),
        {"part-0": "new words", "revision": publication.revision},
    )
    assert response.status_code == 302
    rejected.refresh_from_db()
    assert rejected.status == "scheduled"
    published.refresh_from_db()
    assert published.status == "published"


def test_edit_and_retry_refuses_text_the_platform_would_refuse(as_alice, publication, rejected):
    response = as_alice.post(
        card_url(publication, rejected, "edit-retry/"),
        {"part-0": "z" * 41, "revision": publication.revision},  # short takes 40
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "41 characters; sandbox allows 40." in page
    assert "segments.0.text" not in page
    assert ">" + "z" * 41 + "</textarea>" in page  # nothing typed is lost
    rejected.refresh_from_db()
    assert rejected.status == "failed"
    assert [s.text for s in rejected.segments.all()] == ["hello world"]


def test_edit_and_retry_made_on_a_stale_revision_keeps_the_text(as_alice, publication, rejected):
    response = as_alice.post(
        card_url(publication, rejected, "edit-retry/"),
        {"part-0": "mine", "revision": publication.revision - 1},
    )
    assert response.status_code == 409
    page = response.content.decode()
    assert "Someone changed this post while you were editing." in page
    assert ">mine</textarea>" in page
    assert f'name="revision" value="{publication.revision}"' in page
    rejected.refresh_from_db()
    assert rejected.status == "failed"


def test_edit_and_retry_of_a_destination_that_cannot_be_retried_goes_back(
    as_alice, publication, news
):
    response = as_alice.get(card_url(publication, rendition_of(publication, news), "edit-retry/"))
    assert response.status_code == 302
    assert response["Location"] == url(publication)


def test_edit_and_retry_needs_the_publish_role_and_the_workspace(
    as_vera, as_charlie, publication, rejected
):
    edit = card_url(publication, rejected, "edit-retry/")
    assert as_vera.post(edit, {"part-0": "x", "revision": 1}).status_code == 403
    assert as_charlie.get(edit).status_code == 404
    rejected.refresh_from_db()
    assert rejected.status == "failed"


def test_a_reload_of_the_resolve_address_goes_back_to_the_post(as_alice, publication, short):
    rendition = rendition_of(publication, short)
    response = as_alice.get(card_url(publication, rendition, "resolve/"))
    assert response.status_code == 302
    assert response["Location"] == url(publication)


# --- unknown outcomes read "Needs attention" --------------------------------------------


def test_an_unknown_outcome_reads_needs_attention_on_list_calendar_and_page(
    as_alice, publication, short
):
    fail(rendition_of(publication, short), kind="outcome_unknown", action="verify", ambiguous=True)
    publication_refresh_status(publication)
    day = timezone.localtime(publication.scheduled_at).date().isoformat()
    for page in (
        as_alice.get(url(publication)).content.decode(),
        as_alice.get("/w/ws-a/posts/").content.decode(),
        as_alice.get(f"/w/ws-a/calendar/?date={day}").content.decode(),
    ):
        assert "Needs attention" in page
        assert "status-needs_attention" in page


def test_a_failed_post_still_reads_failed(as_alice, publication, news, short):
    fail(rendition_of(publication, news), kind="content_rejected", action="edit")
    fail(rendition_of(publication, short), kind="content_rejected", action="edit")
    publication_refresh_status(publication)
    page = as_alice.get("/w/ws-a/posts/").content.decode()
    assert '<span class="badge status-failed">Failed</span>' in page
    assert "Needs attention" not in page


# --- the list of posts ------------------------------------------------------------------


def test_the_list_shows_upcoming_soonest_first_then_recent(as_alice, workspace_a, alice, news):
    def make(text, at, status="scheduled"):
        return publication_create(
            workspace=workspace_a,
            author=alice,
            segments=[{"text": text}],
            destinations=[{"account": news.pk}],
            scheduled_at=at,
            status=status,
        )

    now = timezone.now()
    make("in three days", now + timedelta(days=3))
    make("in one hour", now + timedelta(hours=1))
    make("a draft with no time", None, status="draft")
    past = make("went out yesterday", now + timedelta(minutes=5))
    Publication.objects.filter(pk=past.pk).update(scheduled_at=now - timedelta(days=1))
    old = make("went out last week", now + timedelta(minutes=5))
    Publication.objects.filter(pk=old.pk).update(scheduled_at=now - timedelta(days=7))

    page = as_alice.get("/w/ws-a/posts/").content.decode()
    order = [
        "in one hour",
        "in three days",
        "a draft with no time",
        "went out yesterday",
        "went out last week",
    ]
    positions = [page.index(text) for text in order]
    assert positions == sorted(positions)
    assert page.index("Upcoming, soonest first") < positions[0]
    assert positions[1] < page.index("Recent and unscheduled") < positions[2]

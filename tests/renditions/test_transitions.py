from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from apps.renditions.errors import InvalidTransition, RenditionChanged, SegmentAlreadyPublished
from apps.renditions.models import Rendition
from tests.factories import RenditionFactory, RenditionSegmentFactory

S = Rendition.Status
ALL = list(S.values)
LEGAL = {
    ("draft", "scheduled"),
    ("draft", "cancelled"),
    ("scheduled", "publishing"),
    ("scheduled", "cancelled"),
    ("scheduled", "draft"),
    ("publishing", "published"),
    ("publishing", "failed"),
    ("publishing", "waiting"),
    ("publishing", "scheduled"),
    ("waiting", "published"),
    ("waiting", "failed"),
    ("waiting", "publishing"),
    ("failed", "scheduled"),
    ("failed", "published"),
    ("failed", "cancelled"),
}
NOW = datetime(2027, 3, 10, 12, 0, tzinfo=UTC)
ERROR = {"kind": "rate_limited", "message": "Too many requests", "http_status": 429}


def arrange(status, **fields):
    if status == "published":
        fields.setdefault("published_at", NOW)
    return RenditionFactory(status=status, **fields)


def test_the_table_is_exactly_the_documented_one():
    table = {(a, b) for a, targets in Rendition.TRANSITIONS.items() for b in targets}
    assert table == LEGAL
    assert Rendition.TRANSITIONS[S.PUBLISHED] == frozenset()
    assert Rendition.TRANSITIONS[S.CANCELLED] == frozenset()


@pytest.mark.parametrize("old, new", sorted(LEGAL))
def test_every_legal_transition_is_written(db, old, new):
    rendition = arrange(old)
    extra = {"published_at": NOW} if new == "published" else {}

    rendition.transition_to(new, **extra)

    rendition.refresh_from_db()
    assert rendition.status == new


@pytest.mark.parametrize("old, new", [(a, b) for a in ALL for b in ALL if (a, b) not in LEGAL])
def test_every_illegal_transition_raises_and_writes_nothing(db, old, new):
    rendition = arrange(old)

    with pytest.raises(InvalidTransition) as caught:
        rendition.transition_to(new)

    assert caught.value.code == "INVALID_TRANSITION"
    assert caught.value.http_status == 409
    assert caught.value.details == {"rendition": rendition.pk, "from": old, "to": new}
    rendition.refresh_from_db()
    assert rendition.status == old


def test_a_stale_copy_cannot_overwrite_a_newer_outcome(db):
    rendition = arrange("publishing")
    stale = Rendition.objects.get(pk=rendition.pk)
    rendition.mark_published("post-1", "https://example.com/1")

    with pytest.raises(RenditionChanged) as caught:
        stale.mark_failed(ERROR, retry_at=NOW)

    assert caught.value.details["current"] == "published"
    rendition.refresh_from_db()
    assert (rendition.status, rendition.provider_post_id) == ("published", "post-1")


def test_mark_publishing_counts_an_attempt_from_scheduled_only(db):
    rendition = arrange("scheduled", attempts=2, next_retry_at=NOW)

    rendition.mark_publishing()
    assert (rendition.attempts, rendition.next_retry_at) == (3, None)
    rendition.mark_waiting()
    rendition.mark_publishing()  # the next step of the same attempt

    rendition.refresh_from_db()
    assert (rendition.status, rendition.attempts) == ("publishing", 3)


@time_machine.travel(NOW, tick=False)
def test_mark_published_records_the_post_and_clears_the_failure(db):
    rendition = arrange(
        "failed", ambiguous=True, last_error={"kind": "outcome_unknown", "message": "timeout"}
    )

    rendition.mark_published("post-9", "https://example.com/9")

    rendition.refresh_from_db()
    assert rendition.status == "published"
    assert (rendition.provider_post_id, rendition.provider_url) == (
        "post-9",
        "https://example.com/9",
    )
    assert rendition.published_at == NOW
    assert (rendition.ambiguous, rendition.last_error, rendition.next_retry_at) == (
        False,
        None,
        None,
    )


def test_mark_failed_stores_the_structured_error_and_the_retry_time(db):
    rendition = arrange("publishing")
    retry_at = NOW + timedelta(minutes=5)

    rendition.mark_failed({**ERROR, "action": "wait"}, retry_at=retry_at)

    rendition.refresh_from_db()
    assert rendition.last_error == {
        "kind": "rate_limited",
        "code": None,
        "http_status": 429,
        "message": "Too many requests",
        "retryable": True,
        "action": "wait",
        "retry_at": retry_at.isoformat(),
    }
    assert rendition.next_retry_at == retry_at
    assert rendition.is_retry_pending
    assert not rendition.ambiguous


def test_extra_error_keys_from_the_classifier_are_kept(db):
    rendition = arrange("publishing")

    rendition.mark_failed({**ERROR, "existing_post_id": "urn:li:share:1"})

    rendition.refresh_from_db()
    assert rendition.last_error["existing_post_id"] == "urn:li:share:1"
    assert rendition.last_error["retryable"] is False


def test_an_ambiguous_failure_has_no_automatic_retry(db):
    rendition = arrange("publishing")

    with pytest.raises(ValueError):
        rendition.mark_failed(ERROR, retry_at=NOW, ambiguous=True)

    rendition.mark_failed({"kind": "outcome_unknown", "message": "timed out"}, ambiguous=True)
    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous, rendition.next_retry_at) == (
        "failed",
        True,
        None,
    )
    assert rendition.last_error["retryable"] is False
    assert not rendition.is_retry_pending


@pytest.mark.parametrize(
    "error", [{"message": "no kind"}, {"kind": "x"}, {"kind": "", "message": "m"}]
)
def test_a_malformed_error_is_refused(db, error):
    rendition = arrange("publishing")

    with pytest.raises(ValueError):
        rendition.mark_failed(error)
    rendition.refresh_from_db()
    assert rendition.status == "publishing"


def test_retrying_a_failure_clears_the_ambiguous_flag(db):
    rendition = arrange("failed", ambiguous=True)

    rendition.mark_scheduled()

    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == ("scheduled", False)


def test_cancel_and_unschedule_clear_the_retry_time(db):
    failed = arrange("failed", next_retry_at=NOW)
    failed.mark_cancelled()
    assert failed.next_retry_at is None

    scheduled = arrange("scheduled")
    scheduled.mark_draft()
    scheduled.refresh_from_db()
    assert scheduled.status == "draft"


def test_the_database_refuses_an_ambiguous_flag_outside_failed(db):
    from django.db import IntegrityError, transaction

    rendition = arrange("scheduled")
    with pytest.raises(IntegrityError), transaction.atomic():
        Rendition.objects.filter(pk=rendition.pk).update(ambiguous=True)


def test_effective_scheduled_at_prefers_the_rendition_override(db):
    rendition = arrange("draft")
    rendition.publication.scheduled_at = NOW
    assert rendition.effective_scheduled_at == NOW

    rendition.scheduled_at = NOW + timedelta(hours=1)
    assert rendition.effective_scheduled_at == NOW + timedelta(hours=1)


def test_a_segment_is_published_once(db):
    segment = RenditionSegmentFactory()

    segment.mark_published("seg-1", "https://example.com/seg-1", NOW)
    again = type(segment).objects.get(pk=segment.pk)
    with pytest.raises(SegmentAlreadyPublished):
        again.mark_published("seg-2")

    segment.refresh_from_db()
    assert (segment.provider_post_id, segment.published_at) == ("seg-1", NOW)


def test_content_is_editable_until_a_segment_goes_out(db):
    rendition = arrange("failed")
    segment = RenditionSegmentFactory(rendition=rendition)
    assert rendition.is_content_editable

    segment.mark_published("seg-1")
    assert not rendition.is_content_editable
    assert not arrange("failed", ambiguous=True).is_content_editable
    assert not arrange("waiting").is_content_editable

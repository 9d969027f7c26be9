"""How the soak counts its first comments, the way it counts posts: published, failed by
reason, unknown and left to a person by why, still in their scheduled checks, or stuck;
and its wait, which covers a comment still pending as it covers a post."""

import io
import time

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.publishing.delivery.comment import comment_dedupe_key, comment_idempotency_key
from apps.renditions.models import DeliveryAttempt, FirstComment
from loadtest.soak import Soak, SoakConfig
from loadtest.soak_comments import comment_outcomes
from tests.factories import JobFactory, RenditionFactory

Status = FirstComment.Status
Kind, Outcome = DeliveryAttempt.Kind, DeliveryAttempt.Outcome


def _comment(status: str, **fields) -> FirstComment:
    rendition = RenditionFactory(status="published", published_at=timezone.now())
    if status == Status.PUBLISHED:
        fields.setdefault("provider_comment_id", "c-1")
    return FirstComment.objects.create(
        rendition=rendition, workspace_id=rendition.workspace_id, text="Hi", status=status, **fields
    )


def _attempt(comment: FirstComment, kind: str, outcome: str, **fields) -> None:
    DeliveryAttempt.objects.create(
        rendition_id=comment.rendition_id,
        workspace_id=comment.workspace_id,
        kind=kind,
        outcome=outcome,
        idempotency_key=comment_idempotency_key(comment.rendition_id),
        **fields,
    )


def _job(comment: FirstComment, status: str = Job.Status.PENDING) -> None:
    JobFactory(
        type="renditions.first_comment",
        status=status,
        dedupe_key=comment_dedupe_key(comment.pk),
        payload={"comment_id": comment.pk},
    )


def _unknown_after(send_error: dict | None, lookups: list[dict | None]) -> FirstComment:
    """A comment left to a person after a send in doubt (`send_error`, or no answer at
    all: None) and lookups (each its error, None when it ran and found nothing)."""
    comment = _comment(
        Status.UNKNOWN, last_error={"kind": "outcome_unknown", "code": "comment_outcome_unknown"}
    )
    outcome = Outcome.UNKNOWN if send_error else Outcome.LOST
    _attempt(comment, Kind.COMMENT, outcome, error=send_error)
    for error in lookups:
        _attempt(comment, Kind.RECONCILE, Outcome.FAILED, error=error)
    return comment


@pytest.mark.django_db
def test_comments_are_counted_by_outcome_with_why_a_person_has_them():
    published = _comment(Status.PUBLISHED)
    gone = _comment(Status.FAILED, last_error={"kind": "content_rejected", "code": "100/33"})
    http = _comment(Status.FAILED, last_error={"kind": "unknown", "http_status": 404})
    listed_5xx = [
        _unknown_after({"kind": "outcome_unknown", "code": "2", "http_status": 500}, [None, None])
        for _ in range(2)
    ]
    listed_lost = _unknown_after(None, [None])
    throttled_last = _unknown_after(
        {"kind": "outcome_unknown", "code": "backendError", "http_status": 503},
        [None, {"kind": "rate_limited", "code": "rateLimitExceeded"}],
    )
    no_lookup = _comment(Status.UNKNOWN, last_error={"kind": "unknown", "code": "comment_errored"})
    checking = _comment(Status.PENDING)
    _job(checking)
    stuck = _comment(Status.PENDING)
    _job(stuck, Job.Status.DONE)  # finished: nothing comes back to it
    comments = [
        published,
        gone,
        http,
        *listed_5xx,
        listed_lost,
        throttled_last,
        no_lookup,
        checking,
        stuck,
    ]

    figures = comment_outcomes([c.rendition_id for c in comments])

    assert figures == {
        "comments_published": 1,
        "comments_failed": 2,
        "comments_failed_why": {"100/33": 1, "http_404": 1},
        "comments_to_person": 5,
        "comments_to_person_why": {
            "not_listed (2)": 2,
            "not_listed (lost)": 1,
            "lookup_failed (backendError)": 1,
            "no_check (comment_errored)": 1,
        },
        "comments_still_checking": 1,
        "comments_stuck": 1,
    }


def _soak(timeout_s: float) -> Soak:
    config = SoakConfig(first_comments=True, timeout_s=timeout_s)
    return Soak(config=config, progress=io.StringIO())


@pytest.mark.django_db
def test_the_wait_covers_a_first_comment_still_in_its_checks():
    comment = _comment(Status.PENDING)
    _job(comment)
    soak = _soak(timeout_s=1.5)

    started = time.monotonic()
    soak._wait([comment.rendition_id])

    # Its post is published, but the comment's check is still to run: the bound came first.
    assert time.monotonic() - started >= 1.5


@pytest.mark.django_db
def test_the_wait_ends_once_posts_and_comments_are_final():
    comment = _comment(Status.UNKNOWN, last_error={"kind": "outcome_unknown"})
    soak = _soak(timeout_s=30)

    started = time.monotonic()
    soak._wait([comment.rendition_id])

    assert time.monotonic() - started < 5

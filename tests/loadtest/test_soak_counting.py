"""How the soak counts what went wrong: duplicates by idempotency key and by text, lost
posts against the platform's store, stuck renditions (owed an outcome no live job will
give), lost meaning silently dropped (a rendition still on its way when the wait ends is
still running, not lost), and the hang lifted from the fakes."""

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.renditions.models import Rendition
from loadtest.platform_fakes import FakeRequest, FakeResponse, PlatformFake
from loadtest.soak import (
    account_owed,
    duplicates_by_key_and_text,
    left_to_person,
    stuck_renditions,
    witness,
)
from loadtest.soak_fakes import FakeFleet, _Hanging, marker_pattern
from tests.factories import JobFactory, RenditionFactory


def test_a_resend_under_a_new_key_is_a_duplicate_by_text_only():
    posts = [
        ("acct-1", "key-a", "Soak #1"),
        ("acct-1", "key-b", "Soak #1"),  # the frozen worker's request, landed after a retry
        ("acct-1", "key-c", "Soak #2"),
        ("acct-2", "key-d", "Soak #1"),  # the same text on another account: its own post
    ]
    assert duplicates_by_key_and_text(posts) == (0, 1)


def test_a_resend_under_the_same_key_is_a_duplicate_both_ways():
    posts = [("a", "k", "t"), ("a", "k", "t"), ("a", "k", "t"), ("a", "", "u")]
    assert duplicates_by_key_and_text(posts) == (2, 2)


def test_posts_without_a_key_count_by_text_only():
    posts = [("a", "", "t"), ("a", None, "t"), ("a", "", "u")]
    assert duplicates_by_key_and_text(posts) == (0, 1)


def test_the_witness_counts_duplicates_lost_and_posts_the_product_denies():
    marks = {i: (f"m{i}", 2 if i == 2 else 1) for i in range(1, 7)}
    held = Counter({("m1", "a"): 2, ("m2", "a"): 1, ("m4", "a"): 1, ("m5", "b"): 1, ("m6", "a"): 1})
    rows = [
        (1, "published", "a", False),  # posted twice
        (2, "published", "a", False),  # a thread of two, one segment missing: lost
        (3, "published", "a", False),  # nothing at the platform: lost
        (4, "failed", "a", False),  # the platform holds a post we call failed
        (5, "published", "a", False),  # its post is on another account: lost, and unmatched
        (6, "failed", "a", True),  # held while ambiguous: not yet known, not denied
    ]
    seen = witness(rows, held, marks)
    assert seen.duplicates == 1
    assert seen.twice == [1]
    assert seen.lost == {2, 3, 5}
    assert seen.held_not_published == 2
    assert seen.held_called_failed == 1
    assert seen.matched == 5  # of 6 held: one matches no rendition


@pytest.mark.django_db
def test_stuck_is_owed_an_outcome_with_no_live_job():
    def rendition(status: str, **fields) -> Rendition:
        return RenditionFactory(status=status, **fields)

    stranded = rendition("publishing")
    waiting_alone = rendition("waiting")
    retry_without_job = rendition("failed", next_retry_at=timezone.now() + timedelta(minutes=1))
    publishing_with_job = rendition("publishing")
    JobFactory(
        type="renditions.publish",
        status=Job.Status.PENDING,
        dedupe_key=f"publish:{publishing_with_job.pk}",
    )
    waiting_with_poll = rendition("waiting")
    JobFactory(type="renditions.poll", dedupe_key=f"poll:{waiting_with_poll.pk}")
    ambiguous_reconciling = rendition("failed", ambiguous=True)
    JobFactory(type="renditions.reconcile", dedupe_key=f"reconcile:{ambiguous_reconciling.pk}")
    # A finished job moves nothing: the rendition it leaves in publishing is stuck.
    finished_job = rendition("publishing")
    JobFactory(
        type="renditions.publish", status=Job.Status.FAILED, dedupe_key=f"publish:{finished_job.pk}"
    )
    settled = [
        rendition("published", published_at=timezone.now()),
        rendition("failed"),
        rendition("failed", ambiguous=True),
        rendition("cancelled"),
    ]
    ids = [
        r.pk
        for r in (
            stranded,
            waiting_alone,
            retry_without_job,
            publishing_with_job,
            waiting_with_poll,
            ambiguous_reconciling,
            finished_job,
            *settled,
        )
    ]

    stuck = set(stuck_renditions(ids).values_list("pk", flat=True))

    assert stuck == {stranded.pk, waiting_alone.pk, retry_without_job.pk, finished_job.pk}


@pytest.mark.django_db
def test_lost_is_silently_dropped_and_a_rendition_still_on_its_way_is_running():
    now = timezone.now()
    error = {"kind": "provider_unavailable", "message": "503"}
    stranded = RenditionFactory(status="publishing")  # no job: stuck, lost
    resending = RenditionFactory(status="publishing")  # its job still to run: running
    JobFactory(type="renditions.publish", dedupe_key=f"publish:{resending.pk}")
    retrying = RenditionFactory(
        status="failed", next_retry_at=now + timedelta(seconds=5), last_error=error
    )
    JobFactory(type="renditions.publish", dedupe_key=f"publish:{retrying.pk}")
    deferred = RenditionFactory(
        status="failed", next_retry_at=now + timedelta(hours=5), last_error=error
    )
    JobFactory(type="renditions.publish", dedupe_key=f"publish:{deferred.pk}")
    deferred_without_job = RenditionFactory(
        status="failed", next_retry_at=now + timedelta(hours=5), last_error=error
    )
    checking = RenditionFactory(status="waiting")
    JobFactory(type="renditions.poll", dedupe_key=f"poll:{checking.pk}")
    failed_with_reason = RenditionFactory(status="failed", last_error=error)
    failed_silently = RenditionFactory(status="failed")
    left_to_a_person = RenditionFactory(
        status="failed", ambiguous=True, last_error={"kind": "outcome_unknown"}
    )
    published = RenditionFactory(status="published", published_at=now)
    ids = [
        r.pk
        for r in (
            stranded,
            resending,
            retrying,
            deferred,
            deferred_without_job,
            checking,
            failed_with_reason,
            failed_silently,
            left_to_a_person,
            published,
        )
    ]

    owed = account_owed(ids, until=now + timedelta(minutes=1))

    assert owed.stuck == sorted([stranded.pk, deferred_without_job.pk])
    assert owed.lost == {stranded.pk, deferred_without_job.pk, failed_silently.pk}
    assert owed.running == sorted([resending.pk, retrying.pk])
    assert [pk for pk, _ in owed.deferred] == [deferred.pk]
    assert owed.checking == [checking.pk]


@pytest.mark.django_db
def test_unknown_outcomes_left_to_a_person_are_counted_by_why():
    def ambiguous(**error) -> Rendition:
        return RenditionFactory(
            status="failed", ambiguous=True, last_error={"kind": "outcome_unknown", **error}
        )

    def reconciled(rendition: Rendition, status: str, kind: str) -> None:
        JobFactory(
            type="renditions.reconcile",
            status=status,
            dedupe_key=f"reconcile:{rendition.pk}",
            last_error={"kind": kind},
        )

    not_found = [
        ambiguous(code="ReadTimeout", action="verify", reconcile_note="Not found") for _ in range(2)
    ]
    for rendition in not_found:
        reconciled(rendition, Job.Status.FAILED, "not_found")
    unconfirmed = ambiguous(http_status=502, action="verify", reconcile_note="Refused")
    reconciled(unconfirmed, Job.Status.FAILED, "not_found_yet")  # an earlier check
    reconciled(unconfirmed, Job.Status.FAILED, "duplicate_unconfirmed")
    never_checked = ambiguous(code="refused_after_unknown", action="verify")
    # Not a person's: its check is still to run, or it runs once the account is back.
    checking = ambiguous(code="ReadTimeout", action="wait")
    reconciled(checking, Job.Status.PENDING, "not_found_yet")
    awaiting_reconnect = ambiguous(code="worker_lost", action="reconnect")
    plain_failure = RenditionFactory(status="failed", last_error={"kind": "content_rejected"})
    published = RenditionFactory(status="published", published_at=timezone.now())
    ids = [
        r.pk
        for r in (
            *not_found,
            unconfirmed,
            never_checked,
            checking,
            awaiting_reconnect,
            plain_failure,
            published,
        )
    ]

    assert left_to_person(ids) == Counter(
        {
            "not_found (ReadTimeout)": 2,
            "duplicate_unconfirmed (http_502)": 1,
            "no_check (refused_after_unknown)": 1,
        }
    )


def test_lifting_the_hang_answers_the_hanging_organizations_writes_in_time():
    fleet = FakeFleet(classes={"echo": _Echo}, seed=1, fault_rate=0.0, hang_s=3.0)
    fleet.start()
    try:
        pattern = marker_pattern("soak-abc123")
        fleet.hang_posts_with({"soakabc123n000000"}, pattern)
        request = FakeRequest(
            "POST", "echo.invalid", "/posts", {}, {}, b'{"text": "soakabc123n000000 hi"}'
        )
        assert fleet.server.fakes["echo.invalid"].handle(request).delay_s == 3.0

        assert fleet.lift_hang() == 1  # writes answered late

        assert fleet.server.fakes["echo.invalid"].handle(request).delay_s == 0.0
        assert fleet.lift_hang() == 1  # lifting twice changes nothing
    finally:
        fleet.stop()


class _Echo(PlatformFake):
    platform = "echo"
    hosts = ("echo.invalid",)

    def handle(self, request: FakeRequest) -> FakeResponse:
        return FakeResponse(status=201, body={"ok": True})


def test_the_hanging_organizations_writes_are_answered_past_the_timeout():
    tag = "soak-abc123"
    pattern = marker_pattern(tag)
    hanging = {"soakabc123n000000"}
    hung: Counter = Counter()
    fake = _Hanging(_Echo(), hanging, pattern, hang_s=3.0, hung=hung)

    def request(method: str, text: str) -> FakeRequest:
        return FakeRequest(method, "echo.invalid", "/posts", {}, {}, text.encode())

    assert fake.handle(request("POST", '{"text": "soakabc123n000000 hi"}')).delay_s == 3.0
    assert fake.handle(request("POST", '{"text": "soakabc123n000001 hi"}')).delay_s == 0.0
    assert fake.handle(request("GET", "soakabc123n000000")).delay_s == 0.0  # a lookup
    assert hung == {"echo": 1}

"""Delivery under our own infrastructure's faults: a database restart mid-publish strands
nothing and publishes once, the sweep settles renditions left in flight with no job (by
the ambiguity rules, never a blind resend) and reads only in-flight rows, and a worker
whose clock is slow decides on the database's (never resending under an expired key)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from types import SimpleNamespace

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from apps.common.db_clock import db_now
from apps.jobs.errors import DATABASE_ERROR, Snooze, delay_seconds
from apps.jobs.models import Job
from apps.jobs.registry import get_job_type
from apps.jobs.services import job_enqueue, schedule_next_periodic
from apps.jobs.worker import Worker
from apps.providers.base import PollSchedule
from apps.publishing.delivery import publish, stranded, waiting
from apps.publishing.delivery.enqueue import (
    RECONCILE_JOB,
    poll_dedupe_key,
    publish_dedupe_key,
    reconcile_dedupe_key,
)
from apps.renditions.models import DeliveryAttempt, Rendition
from apps.sandbox.services import sandbox_account_create
from tests.factories import (
    PublicationFactory,
    RenditionFactory,
    RenditionSegmentFactory,
)
from tests.plans import analyze, assert_bounded, scans_of
from tests.providers.social_helpers import go_offline, make_account
from tests.renditions.test_pipeline import drain, publish_now, sandbox, witness

__all__ = ["sandbox"]  # fixtures

pytestmark = pytest.mark.django_db(transaction=True)

A = DeliveryAttempt
INSTANCE = "https://mastodon.example"
STATUSES = f"{INSTANCE}/api/v1/statuses"
LISTING = f"{INSTANCE}/api/v1/accounts/1090/statuses"


@pytest.fixture
def worker(db):
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="test-worker")


def _kill_own_connection() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")


# -- a database restart mid-publish --------------------------------------------------------


def test_a_restart_after_the_request_left_strands_nothing_and_publishes_once(
    sandbox, worker, workspace_a, monkeypatch
):
    account = sandbox_account_create(workspace=workspace_a, handle="restarted")
    publication = publish_now(workspace_a, [account])
    [job] = worker.claim_batch()

    def restart_under_the_record(*args, **kwargs):
        _kill_own_connection()  # the platform answered; the database goes away

    monkeypatch.setattr(publish, "record_segment", restart_under_the_record)
    assert worker.run_one(job) == "pending"  # recovered: nothing was decided
    monkeypatch.undo()

    rendition = publication.renditions.get()
    assert rendition.status == "publishing"
    assert rendition.delivery_attempts.get().outcome == A.Outcome.IN_FLIGHT
    recovered = Job.objects.get(pk=job.pk)
    assert (recovered.status, recovered.attempts) == ("pending", 0)
    assert recovered.last_error["kind"] == DATABASE_ERROR

    # Its next run finds the attempt in flight: looked up before anything is sent again.
    Job.objects.filter(pk=job.pk).update(run_at=timezone.now())
    drain(worker, publication)
    rendition.refresh_from_db()
    [post] = witness(sandbox, "restarted")
    assert rendition.status == "published"
    assert rendition.provider_post_id == post["id"]
    assert rendition.delivery_attempts.filter(kind=A.Kind.RECONCILE).exists()


def test_a_restart_before_the_request_left_publishes_on_the_next_run(
    sandbox, worker, workspace_a, monkeypatch
):
    account = sandbox_account_create(workspace=workspace_a, handle="early-restart")
    publication = publish_now(workspace_a, [account])
    [job] = worker.claim_batch()
    real_deliver = publish.deliver

    def restart_before_sending(run):
        _kill_own_connection()

    monkeypatch.setattr(publish, "deliver", restart_before_sending)
    assert worker.run_one(job) == "pending"
    monkeypatch.setattr(publish, "deliver", real_deliver)

    Job.objects.filter(pk=job.pk).update(run_at=timezone.now())
    drain(worker, publication)
    rendition = publication.renditions.get()
    assert rendition.status == "published"
    assert len(witness(sandbox, "early-restart")) == 1
    assert not rendition.delivery_attempts.filter(kind=A.Kind.RECONCILE).exists()


# -- the sweep settles renditions left in flight -------------------------------------------


def _in_flight(status: str, *, attempt: bool = False, checkpoint: dict | None = None):
    rendition = RenditionFactory(status=status, checkpoint=checkpoint or {})
    RenditionSegmentFactory(rendition=rendition, position=0, text="hello")
    if attempt:
        A.objects.create(
            rendition=rendition,
            workspace_id=rendition.workspace_id,
            kind=A.Kind.PUBLISH,
            segment_position=0,
            worker="gone",
            idempotency_key=f"rendition-{rendition.pk}-s0",
        )
    return rendition


def _unfinished(key: str) -> list[Job]:
    return list(Job.objects.unfinished().filter(dedupe_key=key))


def test_a_publishing_rendition_whose_attempt_was_in_flight_is_looked_up_not_resent(db):
    rendition = _in_flight("publishing", attempt=True)

    assert stranded.settle_stranded() == 1

    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == ("failed", True)
    assert rendition.last_error["code"] == "worker_lost"
    assert rendition.delivery_attempts.get().outcome == A.Outcome.LOST
    assert _unfinished(reconcile_dedupe_key(rendition.pk))
    assert not _unfinished(publish_dedupe_key(rendition.pk))


def test_a_publishing_rendition_with_nothing_in_flight_is_published_again(db):
    rendition = _in_flight("publishing")

    assert stranded.settle_stranded() == 1

    rendition.refresh_from_db()
    assert rendition.status == "scheduled"
    assert _unfinished(publish_dedupe_key(rendition.pk))


def test_a_waiting_rendition_gets_its_status_poll_back(db):
    accepted = {"position": 0, "pending_id": "c-1", "accepted_at": "2026-12-06T08:00:00+00:00"}
    rendition = _in_flight("waiting", checkpoint={"pending": accepted})

    assert stranded.settle_stranded() == 1

    rendition.refresh_from_db()
    assert rendition.status == "waiting"
    [poll] = _unfinished(poll_dedupe_key(rendition.pk))
    assert poll.payload["pending_id"] == "c-1" and poll.payload["polls"] == 0
    assert not _unfinished(publish_dedupe_key(rendition.pk))


def test_a_rendition_a_job_is_working_on_is_left_alone(db):
    rendition = _in_flight("publishing", attempt=True)
    job_enqueue(
        type="renditions.publish",
        payload={"rendition_id": rendition.pk},
        organization=None,
        workspace=rendition.workspace,
        dedupe_key=publish_dedupe_key(rendition.pk),
    )
    Job.objects.filter(dedupe_key=publish_dedupe_key(rendition.pk)).update(
        status="processing", lease=uuid.uuid4(), locked_at=timezone.now(), locked_by="other"
    )

    assert stranded.stranded_rendition_ids() == []
    assert stranded.settle_one(rendition.pk) is False
    rendition.refresh_from_db()
    assert rendition.status == "publishing"


def test_the_due_sweep_runs_the_stranded_sweep(db, worker):
    rendition = _in_flight("publishing")
    Job.objects.filter(type="renditions.sweep_due").delete()
    schedule_next_periodic(get_job_type("renditions.sweep_due"), now=True)
    [sweep] = [job for job in worker.claim_batch() if job.type == "renditions.sweep_due"]

    assert worker.run_one(sweep) == "done"
    rendition.refresh_from_db()
    assert rendition.status == "scheduled"


def _columns(table: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s"
            " AND column_name <> 'id' AND is_generated = 'NEVER' ORDER BY ordinal_position",
            [table],
        )
        return [row[0] for row in cursor.fetchall()]


def _copies(
    table: str, template_id: int, source: str, overrides: dict[str, str], where: str = "true"
) -> None:
    """Insert copies of row `template_id` of `table`, one per row of `source` (aliased s)
    matching `where`, with `overrides` (column: SQL over s)."""
    columns = _columns(table)
    values = ", ".join(overrides.get(c, f"t.{c}") for c in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(columns)})"  # noqa: S608 - test constants
            f" SELECT {values} FROM {table} t, {source} WHERE t.id = %s AND {where}",
            [template_id],
        )


def test_the_stranded_sweep_reads_in_flight_renditions_only(db):
    """Many tenants' scheduled and published renditions, and many finished jobs: the sweep
    reads the in-flight ones through their partial index and probes the jobs' unique index."""
    template = RenditionFactory(status="published", published_at=timezone.now())
    first_new = template.publication_id
    _copies(
        "publications_publication",
        template.publication_id,
        "generate_series(1, 3000) AS s(n)",
        {},
    )
    _copies(
        "renditions_rendition",
        template.pk,
        "publications_publication s",
        {
            "publication_id": "s.id",
            "status": "CASE WHEN mod(s.id, 2) = 0 THEN 'published' ELSE 'scheduled' END",
        },
        where=f"s.id > {first_new}",
    )
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO jobs_job (type, seat, payload, status, run_at, attempts, max_attempts,
                   locked_by, dedupe_key, recoveries, snoozed_s, waited_s, created_at,
                   updated_at, finished_at)
            SELECT 'renditions.publish', 'publish', '{}', 'done', now(), 1, 8, '',
                   'publish:' || r.id, 0, 0, 0, now(), now(), now()
              FROM renditions_rendition r
            """
        )
    in_flight = [_in_flight("publishing") for _ in range(3)]
    analyze("renditions_rendition", "jobs_job", "publications_publication")

    scans = scans_of(stranded.STRANDED_SQL, ("renditions_rendition", "jobs_job"), [100])

    assert scans and {s.table for s in scans} == {"renditions_rendition", "jobs_job"}
    assert_bounded(scans, max_rows=20)
    assert sorted(stranded.stranded_rendition_ids()) == sorted(r.pk for r in in_flight)


# -- the database clock decides, not the worker's ------------------------------------------


@pytest.fixture
def mastodon_account(workspace_a, monkeypatch):
    go_offline(monkeypatch)
    return make_account(
        workspace_a,
        "mastodon",
        remote_id="1090@mastodon.example",
        handle="alice@mastodon.example",
        credentials={"access_token": "tok-1"},
        settings={"instance": INSTANCE, "account_id": "1090"},
    )


def _ambiguous_on(account, *, sent_minutes_ago: float) -> Rendition:
    publication = PublicationFactory(workspace=account.workspace)
    rendition = RenditionFactory(
        publication=publication,
        social_account=account,
        status="failed",
        ambiguous=True,
        last_error={"kind": "outcome_unknown", "message": "timed out"},
    )
    RenditionSegmentFactory(rendition=rendition, position=0, text="Fresh bread")
    attempt = A.objects.create(
        rendition=rendition,
        workspace_id=rendition.workspace_id,
        kind=A.Kind.PUBLISH,
        segment_position=0,
        idempotency_key=f"rendition-{rendition.pk}-s0",
        outcome=A.Outcome.UNKNOWN,
    )
    # Stamped on the database clock, as the publish job stamps it.
    A.objects.filter(pk=attempt.pk).update(
        started_at=db_now() - timedelta(minutes=sent_minutes_ago)
    )
    job_enqueue(
        type=RECONCILE_JOB,
        payload={"rendition_id": rendition.pk},
        organization=None,
        workspace=rendition.workspace,
        dedupe_key=reconcile_dedupe_key(rendition.pk),
    )
    return rendition


def _old_status() -> dict:
    return {
        "id": "9",
        "url": f"{INSTANCE}/@alice/9",
        "created_at": "2020-01-01T00:00:00.000Z",
        "content": "<p>Something else</p>",
        "in_reply_to_id": None,
    }


def _reconcile_with_a_slow_clock(worker, minutes_slow: float) -> None:
    with time_machine.travel(timezone.now() - timedelta(minutes=minutes_slow), tick=True):
        [job] = worker.claim_batch()
        assert job.type == RECONCILE_JOB
        worker.run_one(job)


def test_a_worker_12_minutes_slow_never_resends_under_an_expired_key(
    worker, mastodon_account, respx_mock
):
    # Sent 50 minutes ago: past the key's safe window (48 of its 60 minutes) on the
    # database clock, inside it on a clock 12 minutes slow.
    rendition = _ambiguous_on(mastodon_account, sent_minutes_ago=50)
    create = respx_mock.post(STATUSES).respond(200, json={"id": "10"})
    listing = respx_mock.get(url__startswith=LISTING).respond(200, json=[_old_status()])

    _reconcile_with_a_slow_clock(worker, minutes_slow=12)

    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == ("failed", True)  # looked up instead
    assert listing.call_count >= 1
    assert create.call_count == 0
    assert not _unfinished(publish_dedupe_key(rendition.pk))


def test_inside_the_keys_window_the_resend_under_the_same_key_is_chosen(
    worker, mastodon_account, respx_mock
):
    rendition = _ambiguous_on(mastodon_account, sent_minutes_ago=30)
    listing = respx_mock.get(url__startswith=LISTING).respond(200, json=[_old_status()])

    _reconcile_with_a_slow_clock(worker, minutes_slow=12)

    rendition.refresh_from_db()
    assert rendition.status == "scheduled"  # resent under the key, the platform dedupes
    assert _unfinished(publish_dedupe_key(rendition.pk))
    assert listing.call_count == 0


def test_a_handle_the_adapter_knows_dead_is_looked_up_not_resent(
    worker, mastodon_account, respx_mock, monkeypatch
):
    """Inside the key's window a resend is chosen, unless the adapter says a resend can no
    longer settle it (a YouTube session gone after its final byte): then it looks up."""
    from apps.providers.mastodon.adapter import MastodonAdapter

    monkeypatch.setattr(MastodonAdapter, "resend_settles", lambda self, ctx: False)
    rendition = _ambiguous_on(mastodon_account, sent_minutes_ago=30)
    create = respx_mock.post(STATUSES).respond(200, json={"id": "10"})
    listing = respx_mock.get(url__startswith=LISTING).respond(200, json=[_old_status()])

    _reconcile_with_a_slow_clock(worker, minutes_slow=0)

    assert listing.call_count >= 1
    assert create.call_count == 0
    rendition.refresh_from_db()
    assert rendition.ambiguous


def test_a_retry_at_instant_is_measured_on_the_database_clock(db):
    due = db_now() + timedelta(seconds=60)
    with time_machine.travel(timezone.now() - timedelta(minutes=12), tick=True):
        assert delay_seconds(due) == pytest.approx(60, abs=2)
        assert delay_seconds(Snooze(due).until) == pytest.approx(60, abs=2)
    assert delay_seconds(timedelta(seconds=5)) == 5  # relative delays need no clock


def test_a_retry_after_in_seconds_counts_from_the_database_clock(db):
    from apps.providers.errors import parse_retry_after

    with time_machine.travel(timezone.now() - timedelta(minutes=12), tick=True):
        db_now()  # as before every attempt: measures this host's offset
        # A 429 saying "Retry-After: 60" on a host 12 minutes slow: one minute from now on
        # the clock it is compared with, not 11 minutes ago.
        retry_at = parse_retry_after("60")
        assert delay_seconds(retry_at) == pytest.approx(60, abs=2)


def test_a_poll_budget_is_counted_on_the_database_clock(db):
    adapter = SimpleNamespace(
        poll_schedule=PollSchedule(initial_delay_s=5, interval_s=30, max_wait_s=3600)
    )
    accepted_at = db_now() - timedelta(minutes=59, seconds=50)
    with time_machine.travel(timezone.now() - timedelta(minutes=12), tick=True):
        # 10 s left of the hour, whatever this worker's clock says.
        delay = waiting.next_poll_delay(adapter, polls_done=3, accepted_at=accepted_at)
    assert delay is not None and delay == pytest.approx(10, abs=2)

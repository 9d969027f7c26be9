"""Our own faults are faults too: a database error under a handler decides nothing, a lost
outcome write is written after reconnecting, no request leaves once the lease is gone,
heartbeats never wait on a handler's locks, and a worker refuses a lease too short for its
database bounds. Transactional: handlers kill and reopen real connections."""

import threading
import time
import uuid
from datetime import timedelta

import httpx
import psycopg
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import OperationalError, connection, transaction

from apps.common.direct import direct_connection_params
from apps.jobs import heartbeat, queue
from apps.jobs.errors import DATABASE_ERROR, LeaseLost, RetryableError
from apps.jobs.models import Job
from apps.jobs.registry import StalePolicy
from apps.jobs.services import job_recover_stale
from apps.jobs.worker import Worker, check_session_bounds
from apps.providers import httpcall
from tests.factories import JobFactory, OrganizationFactory
from tests.jobs.conftest import age_heartbeat, db_now, seconds_from_now

pytestmark = pytest.mark.django_db(transaction=True)

URL = "https://platform.example/api/posts"


def _worker(**options):
    defaults = {
        "threads": 1,
        "batch_size": 10,
        "poll_s": 0.05,
        "heartbeat_s": 1,
        "stale_after_s": 30,
        "grace_s": 1,
        "name": "w1",
    }
    return Worker(**{**defaults, **options})


def _kill_own_connection() -> None:
    """What a server restart does to a session: it is terminated under the caller."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")


def _claim_one(worker, job_type: str, **fields) -> Job:
    job = JobFactory(type=job_type, organization=OrganizationFactory(), **fields)
    [claimed] = worker.claim_batch()
    assert claimed.pk == job.pk
    return claimed


# -- a database error in a handler decided nothing ----------------------------------------


def test_a_connection_killed_under_a_handler_requeues_the_job_without_spending_the_attempt(
    job_types,
):
    calls = []

    def handler(job):
        calls.append(job.attempts)
        if len(calls) == 1:
            _kill_own_connection()  # "terminating connection due to administrator command"

    job_types("t.restart", handler, retry_kinds=frozenset())  # an error would fail it for good
    worker = _worker()
    claimed = _claim_one(worker, "t.restart")

    assert worker.run_one(claimed) == "pending"

    job = Job.objects.get(pk=claimed.pk)
    assert (job.status, job.attempts, job.recoveries) == ("pending", 0, 1)
    assert job.last_error["kind"] == DATABASE_ERROR
    assert "terminating connection" in job.last_error["message"]
    assert job.lease is None and job.locked_by == ""
    assert 0.5 < seconds_from_now(job.run_at) <= 1.0  # spaced out: 1 s, 2 s, 4 s...
    assert worker.recovered_interrupted == 1

    Job.objects.filter(pk=job.pk).update(run_at=db_now())
    [again] = worker.claim_batch()
    assert worker.run_one(again) == "done"
    assert calls == [1, 1]  # the same first attempt, run again


@pytest.mark.parametrize(
    "error",
    [
        OperationalError("the connection is lost"),
        psycopg.errors.AdminShutdown("terminating connection due to administrator command"),
        psycopg.InterfaceError("connection already closed"),
    ],
    ids=["django", "psycopg-admin-shutdown", "psycopg-interface"],
)
def test_a_database_error_is_never_a_permanent_failure_even_where_errors_are_not_retried(
    job_types, error
):
    stale_calls = []

    def handler(job):
        raise error

    job_types(
        "t.publish_like",
        handler,
        retry_kinds=frozenset(),
        stale_policy=StalePolicy.CALLBACK,
        on_stale=lambda job: stale_calls.append(job.pk),
    )
    worker = _worker()
    claimed = _claim_one(worker, "t.publish_like")

    assert worker.run_one(claimed) == "pending"

    job = Job.objects.get(pk=claimed.pk)
    assert (job.status, job.attempts) == ("pending", 0)
    assert job.last_error["kind"] == DATABASE_ERROR
    assert stale_calls == []  # requeued: its next run settles what this one left


def test_a_database_error_that_persists_ends_in_the_types_stale_policy(job_types):
    stale_calls = []

    def handler(job):
        raise OperationalError("canceling statement due to lock timeout")

    job_types(
        "t.persistent",
        handler,
        retry_kinds=frozenset(),
        stale_policy=StalePolicy.CALLBACK,
        on_stale=lambda job: stale_calls.append(job.last_error["kind"]),
    )
    worker = _worker()
    claimed = _claim_one(worker, "t.persistent", max_attempts=2)

    statuses = [worker.run_one(claimed)]
    for _ in range(2):
        Job.objects.filter(pk=claimed.pk).update(run_at=db_now())
        [claimed] = worker.claim_batch()
        statuses.append(worker.run_one(claimed))

    assert statuses == ["pending", "pending", "failed"]
    job = Job.objects.get(pk=claimed.pk)
    assert job.recoveries == 3 and job.last_error["kind"] == DATABASE_ERROR
    assert "3 times; gave up" in job.last_error["message"]
    assert stale_calls == [DATABASE_ERROR]  # e.g. a publish: settled by the ambiguity rules


def test_the_thread_drops_the_connection_a_database_error_killed_before_its_next_job(
    job_types,
):
    backends = []

    def handler(job):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backends.append((job.payload["name"], cursor.fetchone()[0]))
        if job.payload["name"] == "first":
            _kill_own_connection()

    job_types("t.pid", handler)
    org = OrganizationFactory()
    first = JobFactory(type="t.pid", organization=org, payload={"name": "first"})
    second = JobFactory(type="t.pid", organization=org, payload={"name": "second"})
    Job.objects.filter(pk=second.pk).update(run_at=first.run_at + timedelta(seconds=1))
    _worker(threads=1).run(burst=True)  # one handler thread runs both, in turn

    assert Job.objects.get(pk=first.pk).last_error["kind"] == DATABASE_ERROR
    assert Job.objects.get(pk=second.pk).status == "done"
    [(_, killed), (_, fresh)] = backends
    assert killed != fresh


# -- the worker's own outcome writes -----------------------------------------------------


def test_an_outcome_write_that_fails_on_a_dead_connection_is_written_after_reconnecting(
    job_types, monkeypatch
):
    def handler(job):
        raise RetryableError("provider_unavailable", "503")

    job_types("t.flaky", handler, retry_kinds=frozenset({"provider_unavailable"}))
    JobFactory(type="t.flaky", organization=OrganizationFactory())
    real = queue.transition
    failures = []

    def transition_on_a_dead_connection(*args, **kwargs):
        if not failures:
            failures.append(1)
            _kill_own_connection()  # the loop's connection dies right before the write
        return real(*args, **kwargs)

    monkeypatch.setattr(queue, "transition", transition_on_a_dead_connection)
    worker = _worker(types=["t.flaky"])
    worker.run(burst=True)

    job = Job.objects.get(type="t.flaky")
    assert failures == [1]
    assert (job.status, job.attempts) == ("pending", 1)
    assert job.last_error["kind"] == "provider_unavailable"
    assert worker.jobs_done == 1


# -- no request leaves once the lease is gone ---------------------------------------------


def _sender(sent_before: threading.Event | None = None, go: threading.Event | None = None):
    def handler(job):
        if sent_before is not None:
            sent_before.set()
            assert go.wait(10)
        with httpcall.client() as http:
            httpcall.send(http, "POST", URL, is_create=True, json={"text": "hello"})

    return handler


def test_a_job_whose_lease_was_taken_over_never_sends(job_types, respx_mock):
    route = respx_mock.post(URL).respond(200, json={"id": "1"})
    job_types("t.send", _sender())
    worker = _worker()
    claimed = _claim_one(worker, "t.send")
    Job.objects.filter(pk=claimed.pk).update(lease=uuid.uuid4())  # another worker's claim

    assert worker.run_one(claimed) == "lost"
    assert route.call_count == 0


def test_a_held_lease_sends(job_types, respx_mock):
    route = respx_mock.post(URL).respond(200, json={"id": "1"})
    job_types("t.send", _sender())
    worker = _worker()

    assert worker.run_one(_claim_one(worker, "t.send")) == "done"
    assert route.call_count == 1


def test_a_worker_paused_past_its_lease_sends_nothing_when_it_resumes(job_types, respx_mock):
    """The handler is frozen right before its request (as SIGSTOP freezes it); meanwhile
    the heartbeat goes stale and another worker recovers the job. Resumed, it must not send."""
    route = respx_mock.post(URL).respond(200, json={"id": "1"})
    paused, resume = threading.Event(), threading.Event()
    job_types("t.paused", _sender(paused, resume), stale_policy=StalePolicy.REQUEUE)
    worker = _worker()
    claimed = _claim_one(worker, "t.paused")
    outcome = []

    def run():
        try:
            outcome.append(worker.execute(claimed))
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    assert paused.wait(10)
    age_heartbeat(claimed, worker.stale_after_s + 1)
    assert job_recover_stale(stale_s=worker.stale_after_s) == 1  # the other worker's recovery
    resume.set()
    thread.join(10)

    assert outcome[0].lost
    assert route.call_count == 0


def test_a_handler_past_its_time_limit_sends_nothing(job_types, respx_mock):
    route = respx_mock.post(URL).respond(200, json={"id": "1"})
    job_types("t.slow", _sender(), time_limit_s=5)
    worker = _worker()
    claimed = _claim_one(worker, "t.slow")
    Job.objects.filter(pk=claimed.pk).update(started_at=db_now() - timedelta(seconds=6))

    assert worker.run_one(claimed) == "lost"
    assert route.call_count == 0


def test_the_guard_is_the_job_runners_only(respx_mock):
    """Outside a job (a web request connecting an account) nothing is checked."""
    route = respx_mock.post(URL).respond(200, json={"id": "1"})
    with httpcall.client() as http:
        httpcall.send(http, "POST", URL, is_create=True)
    assert route.call_count == 1


def test_lease_lost_is_raised_before_the_request_leaves(job_types, respx_mock):
    seen = []
    route = respx_mock.post(URL).respond(200)

    def handler(job):
        Job.objects.filter(pk=job.pk).update(status="failed")  # settled by someone else
        with httpcall.client() as http:
            try:
                httpcall.send(http, "POST", URL, is_create=True)
            except LeaseLost as exc:
                seen.append(exc)
                raise

    job_types("t.settled", handler)
    worker = _worker()
    assert worker.run_one(_claim_one(worker, "t.settled")) == "lost"
    assert len(seen) == 1 and route.call_count == 0
    assert isinstance(seen[0], LeaseLost) and not isinstance(seen[0], httpx.HTTPError)


# -- heartbeats never wait on a handler's locks --------------------------------------------


def test_a_heartbeat_skips_a_row_a_handler_holds_locked_and_never_calls_it_lost(job_types):
    job_types("t.noop", lambda job: None)
    worker = _worker()
    claimed = _claim_one(worker, "t.noop")
    keeper_conn = psycopg.connect(
        **{
            k: v
            for k, v in connection.get_connection_params().items()
            if k not in ("cursor_factory", "context", "prepare_threshold")
        },
        autocommit=True,
    )
    try:
        with transaction.atomic():  # the handler holds its job's row lock (holding_lease)
            Job.objects.select_for_update().get(pk=claimed.pk)
            started = time.monotonic()
            lost, skipped = heartbeat.refresh_leases(
                [(claimed.pk, claimed.lease)], stale_s=worker.stale_after_s, conn=keeper_conn
            )
            waited = time.monotonic() - started
        assert (lost, skipped) == (set(), {claimed.pk})
        assert waited < 0.5
        age_heartbeat(claimed, 5)
        lost, skipped = heartbeat.refresh_leases(
            [(claimed.pk, claimed.lease)], stale_s=worker.stale_after_s, conn=keeper_conn
        )
        assert (lost, skipped) == (set(), set())
        assert seconds_from_now(Job.objects.get(pk=claimed.pk).locked_at) > -1
    finally:
        keeper_conn.close()


def test_the_lease_keeper_beats_on_its_own_thread_while_the_loop_and_handlers_are_busy(
    job_types,
):
    def handler(job):
        time.sleep(1.5)

    job_types("t.sleep", handler)
    job = JobFactory(type="t.sleep", organization=OrganizationFactory())
    worker = _worker(heartbeat_s=0.2)
    worker.run(burst=True)

    assert Job.objects.get(pk=job.pk).status == "done"
    assert worker._keeper.beats >= 3


def test_the_lease_keeper_reports_a_lease_recovered_meanwhile(job_types):
    job_types("t.noop", lambda job: None)
    worker = _worker()
    claimed = _claim_one(worker, "t.noop")
    Job.objects.filter(pk=claimed.pk).update(lease=uuid.uuid4())

    assert worker._keeper.beat() == worker.heartbeat_s
    assert claimed.pk in worker._lost
    worker._keeper.stop()


def test_behind_a_pooler_the_lease_keeper_beats_on_postgresql_itself(
    job_types, settings, monkeypatch
):
    job_types("t.noop", lambda job: None)
    worker = _worker(heartbeat_s=2)  # a failed beat would come back in 1 s
    claimed = _claim_one(worker, "t.noop")
    server = connection.settings_dict
    settings.DATABASE_DIRECT = {
        "NAME": server["NAME"],
        "USER": server["USER"],
        "PASSWORD": server["PASSWORD"],
        "HOST": server["HOST"],
        "PORT": server["PORT"],
        # (The embedded server is reached by its socket directory, named in OPTIONS.)
        "OPTIONS": {
            **{k: v for k, v in server["OPTIONS"].items() if k == "host"},
            "options": "-c idle_in_transaction_session_timeout=60000",
        },
    }
    # DATABASE_URL names the pooler (here one that is not even there).
    pooler = {"dbname": "pooled", "host": "127.0.0.1", "port": 1, "user": "app"}
    monkeypatch.setattr(connection, "get_connection_params", lambda: dict(pooler))
    keeper = worker._keeper
    try:
        params = keeper.connection_params()
        direct = direct_connection_params()
        # (No host nor port where the server is reached by its socket's default.)
        assert {k: params.get(k) for k in ("dbname", "host", "port", "user")} == {
            k: direct.get(k) for k in ("dbname", "host", "port", "user")
        }
        assert params.get("port") != 1
        assert params["options"] == (
            "-c idle_in_transaction_session_timeout=60000 "
            "-c lock_timeout=1000 -c statement_timeout=5000"
        )
        assert keeper.beat() == worker.heartbeat_s  # a heartbeat written, not a failure
        assert keeper.beats == 1 and claimed.pk not in worker._lost
    finally:
        keeper.stop()
        monkeypatch.undo()


# -- a lease too short for the database's bounds -------------------------------------------


def test_a_worker_refuses_a_stale_window_under_three_lock_timeouts(settings):
    settings.DB_LOCK_TIMEOUT_S = 10
    settings.DB_STATEMENT_TIMEOUT_S = 0
    with pytest.raises(ImproperlyConfigured, match="DB_LOCK_TIMEOUT_S"):
        _worker(stale_after_s=20).run(burst=True)
    check_session_bounds(30)


def test_a_worker_refuses_a_stale_window_under_three_statement_timeouts(settings):
    settings.DB_LOCK_TIMEOUT_S = 1
    settings.DB_STATEMENT_TIMEOUT_S = 30
    with pytest.raises(ImproperlyConfigured, match="at least 3 times DB_STATEMENT_TIMEOUT_S"):
        check_session_bounds(60)
    check_session_bounds(90)  # production: 900 s against 30 s and 10 s


def test_an_unbounded_timeout_is_not_compared_and_is_logged(settings, caplog):
    settings.DB_LOCK_TIMEOUT_S = 0
    settings.DB_STATEMENT_TIMEOUT_S = 0
    check_session_bounds(2)
    assert "DB_LOCK_TIMEOUT_S and DB_STATEMENT_TIMEOUT_S set to 0 (no bound)" in caplog.text

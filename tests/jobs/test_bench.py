import json
from io import StringIO

import pytest
from django.core.management import call_command

from apps.accounts.models import Organization
from apps.jobs.models import Job, WorkerProcess
from tests.processes import test_database_url as worker_database_url


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_bench_queue_prints_its_figures_and_cleans_up(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", worker_database_url())  # for the worker processes
    out, err = StringIO(), StringIO()

    call_command(
        "bench_queue",
        jobs=200,
        orgs=2,
        workers=1,
        latency_jobs=5,
        scheduled_jobs=5,
        fair_big=100,
        fair_small_orgs=2,
        fair_small_jobs=2,
        history_steps=[0, 300],
        history=500,
        probe_claims=10,
        scenario="burst-trickle",
        burst_jobs=100,
        timeout=60,
        stdout=out,
        stderr=err,
    )

    figures = json.loads(out.getvalue().strip().splitlines()[-1])
    for key in (
        "enqueue_per_s",
        "jobs_per_s",
        "latency_p50_ms",
        "latency_p99_ms",
        "due_latency_p99_ms",
        "fairness_max_start_s",
        "raw_limit_jobs_per_s",
        "ratio_to_raw",
        "claim_ms_p50",
        "claim_ms_p50_after_burst",
        "burst_trickle_latency_p99_ms",
        "burst_trickle_due_latency_p99_ms",
    ):
        assert figures[key] > 0, key
    assert figures["history"] == 500
    assert set(figures["claim_ms_p50_by_history"]) == {"0", "300"}
    assert figures["duplicate_claims"] == 0
    assert figures["worker_exit_codes"] == [0]
    assert "drain" in err.getvalue()  # the progress bar
    assert not Organization.objects.filter(slug__startswith="bench-").exists()
    assert not Job.objects.filter(type="noop").exists()
    assert not WorkerProcess.objects.filter(name__startswith="bench-").exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_bench_queue_measures_idle_organizations_and_everyone_at_nine(monkeypatch):
    from apps.jobs.models import QueueHead

    monkeypatch.setenv("DATABASE_URL", worker_database_url())
    out, err = StringIO(), StringIO()

    call_command(
        "bench_queue",
        jobs=100,
        orgs=2,
        workers=2,
        latency_jobs=5,
        scheduled_jobs=5,
        no_fairness=True,
        no_raw_reference=True,
        probe_claims=10,
        idle_orgs=12_000,
        scenario="everyone-at-nine",
        nine_orgs=300,
        timeout=60,
        stdout=out,
        stderr=err,
    )

    figures = json.loads(out.getvalue().strip().splitlines()[-1])
    assert figures["idle_orgs"] == 12_000
    assert set(figures["claim_ms_p50_by_idle_orgs"]) == {"0", "10000", "12000"}
    assert all(ms > 0 for ms in figures["claim_ms_p50_by_idle_orgs"].values())
    assert figures["everyone_at_nine_orgs"] == 300
    assert 0 <= figures["everyone_at_nine_start_p50_s"] <= figures["everyone_at_nine_last_start_s"]
    assert figures["duplicate_claims"] == 0
    assert figures["worker_exit_codes"] == [0, 0]
    assert "idle organizations" in err.getvalue()
    assert not Organization.objects.filter(slug__startswith="bench-").exists()
    assert not Job.objects.filter(type="noop").exists()
    assert not QueueHead.objects.exists()

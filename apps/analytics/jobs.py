"""The analytics job types (imported at startup by the jobs app): a periodic sweep that
finds the workspaces and platforms with due reads, and one read-only sync job per
(workspace, platform) that holds no publish seat."""

from __future__ import annotations

from datetime import timedelta

from django.db.models.functions import Now

from apps.analytics import sync
from apps.analytics.models import FollowersSchedule, MetricsSchedule
from apps.jobs.models import Job
from apps.jobs.registry import Backoff, StalePolicy, job_type
from apps.jobs.services import JobSpec, job_enqueue_many

SYNC_JOB = "analytics.sync"
SWEEP_JOB = "analytics.sweep"
# (workspace, platform) pairs one sweep enqueues at most; the next sweep takes the rest.
SWEEP_LIMIT = 1000


def sync_dedupe_key(workspace_id: int, platform: str) -> str:
    return f"analytics:{workspace_id}:{platform}"


@job_type(
    SYNC_JOB,
    # Many: a read is harmless to repeat, and a failed job would let the next sweep start
    # a fresh one at once, undoing the backoff a platform asked for.
    max_attempts=20,
    backoff=Backoff(base_s=60, cap_s=6 * 3600),
    # "errored" is in: a read repeated after our bug adds a sample, it never posts.
    retry_kinds=frozenset(
        {"rate_limited", "provider_unavailable", "network_before_send", "errored"}
    ),
    stale_policy=StalePolicy.REQUEUE,  # it only reads
    seat=None,  # ...and holds no publish seat: analytics never delays a post
    snooze_budget_s=48 * 3600.0,  # a spent daily budget snoozes it to the next UTC day
)
def sync_job(job: Job) -> None:
    sync.sync_workspace_platform(
        workspace_id=int(job.payload["workspace_id"]), platform=str(job.payload["platform"])
    )


@job_type(SWEEP_JOB, periodic_every=timedelta(minutes=2), stale_policy=StalePolicy.CLOSE)
def sweep_job(job: Job) -> None:
    analytics_sweep()


def analytics_sweep() -> int:
    """Enqueue one sync job per (workspace, platform) with due reads on an enabled
    platform (a pair whose job is still unfinished keeps it: the dedupe key). Reads only
    due schedules through their partial indexes: its cost follows the due work."""
    enabled = sorted(sync.enabled_platforms())
    pairs: set[tuple[int, int, str]] = set()
    for model in (MetricsSchedule, FollowersSchedule):
        due = (
            model.objects.filter(platform__in=enabled, next_sync_at__lte=Now())
            .values_list("workspace__organization_id", "workspace_id", "platform")
            .distinct()[:SWEEP_LIMIT]
        )
        pairs.update(due)
    return job_enqueue_many(
        JobSpec(
            type=SYNC_JOB,
            payload={"workspace_id": workspace_id, "platform": platform},
            organization_id=organization_id,
            workspace_id=workspace_id,
            dedupe_key=sync_dedupe_key(workspace_id, platform),
            lane=platform,
        )
        for organization_id, workspace_id, platform in sorted(pairs)
    )

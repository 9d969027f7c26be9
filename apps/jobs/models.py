"""The durable job queue (a Job row per unit of work) and the registry of worker processes."""

from __future__ import annotations

from django.contrib.postgres.indexes import BrinIndex
from django.db import models
from django.db.models.functions import Greatest, Now

from apps.accounts.models import Organization, Workspace
from apps.common.querysets import WorkspaceQuerySet
from apps.jobs.constants import Seat


class JobQuerySet(WorkspaceQuerySet):
    def unfinished(self) -> JobQuerySet:
        return self.filter(status__in=Job.UNFINISHED)

    def finished(self) -> JobQuerySet:
        return self.filter(status__in=Job.FINISHED)


class Job(models.Model):
    """One unit of work, run by `run_worker` when `run_at` has come.

    Status transitions:
        pending    -> processing   claimed by a worker (attempts + 1, fresh lease)
        pending    -> cancelled    job_cancel
        processing -> done         the handler returned
        processing -> pending      retry with backoff; Snooze (attempt not spent); released
                                   at shutdown or recovered as stale (REQUEUE, attempt not
                                   spent)
        processing -> waiting      the handler raised Waiting (attempt not spent)
        processing -> failed       permanent error, retries exhausted, stale (FAIL/CALLBACK)
        processing -> cancelled    stale and closed as superseded (CLOSE)
        waiting    -> pending      its run_at came (the worker promotes it)
        waiting    -> cancelled    job_cancel
        failed     -> pending      an operator's "retry now"
    done and cancelled are final. A job is "unfinished" while pending, processing or
    waiting; its dedupe key is unique among unfinished jobs.

    `organization` is null for system jobs (housekeeping): they are not under any cap.
    `seat` is copied from the job type at enqueue: the organization budget (cap) the job
    counts against while it runs (see constants.Seat). `lane` (empty for most jobs) names
    the platform a publishing job talks to: the organization's budget is shared between
    its due lanes, so one platform hanging every request cannot hold all of it.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        PROCESSING = "processing"
        WAITING = "waiting"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    UNFINISHED = (Status.PENDING, Status.PROCESSING, Status.WAITING)
    FINISHED = (Status.DONE, Status.FAILED, Status.CANCELLED)

    organization = models.ForeignKey(
        Organization, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    type = models.CharField(max_length=100)
    seat = models.CharField(
        max_length=16,
        choices=Seat.choices,
        db_default=Seat.PUBLISH,
        help_text="The organization budget it counts against while running (from its type).",
    )
    lane = models.CharField(
        max_length=32,
        blank=True,
        db_default="",
        help_text="The platform it talks to: due lanes share the seat's budget.",
    )
    payload = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    run_at = models.DateTimeField(db_default=Now(), help_text="Not claimed before this time.")
    attempts = models.PositiveIntegerField(default=0, help_text="Attempts spent so far.")
    max_attempts = models.PositiveIntegerField(default=5)
    last_error = models.JSONField(null=True, blank=True)
    locked_by = models.CharField(max_length=200, blank=True, help_text="Worker that claimed it.")
    locked_at = models.DateTimeField(null=True, blank=True, help_text="Last heartbeat.")
    lease = models.UUIDField(
        null=True, blank=True, help_text="Fresh per claim; outcomes are written only under it."
    )
    dedupe_key = models.CharField(max_length=255, null=True, blank=True)
    recoveries = models.PositiveIntegerField(
        default=0, help_text="Times recovered from a worker that stopped heart-beating."
    )
    snoozed_s = models.FloatField(default=0.0, help_text="Seconds spent snoozed (rate limits).")
    waited_s = models.FloatField(default=0.0, help_text="Seconds spent waiting on a platform.")
    created_at = models.DateTimeField(db_default=Now())
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(db_default=Now())

    objects = JobQuerySet.as_manager()

    # Not stored: set by the worker on the jobs it claims (absent on any other instance).
    _claimed_mono: float  # time.monotonic() at the claim
    _stale_after_s: float  # the stale window lease_is_held applies to this claim

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["dedupe_key"],
                condition=models.Q(
                    dedupe_key__isnull=False, status__in=["pending", "processing", "waiting"]
                ),
                name="job_dedupe_key_unfinished",
            ),
            models.CheckConstraint(
                condition=models.Q(
                    status__in=["pending", "processing", "waiting", "done", "failed", "cancelled"]
                ),
                name="job_status_valid",
            ),
            models.CheckConstraint(condition=models.Q(seat__in=Seat.values), name="job_seat_valid"),
            models.CheckConstraint(
                condition=~models.Q(status="processing") | models.Q(lease__isnull=False),
                name="job_processing_has_lease",
            ),
        ]
        indexes = [
            # The claim: per organization, seat and lane, its earliest due pending jobs
            # (`WHERE status = 'pending' AND organization_id = ? AND seat = ? AND lane = ?
            # AND run_at <= now() ORDER BY run_at, id`), and the queue heads' raise.
            # Holds pending rows only, so its size does not grow with the finished
            # history. (`id` makes the order total, and makes this the only index that
            # serves it.)
            models.Index(
                fields=["organization", "seat", "lane", "run_at", "id"],
                condition=models.Q(status="pending"),
                name="job_pending_org_lane_run_at",
            ),
            # The worker's sleep: `SELECT min(run_at) ... WHERE status = 'pending' AND
            # run_at > now()`, and the queue-lag metric (oldest due pending job).
            models.Index(
                fields=["run_at"],
                condition=models.Q(status="pending"),
                name="job_pending_run_at",
            ),
            # The claim of system jobs (no organization): `WHERE status = 'pending' AND
            # organization_id IS NULL AND run_at <= now() ORDER BY run_at, id`.
            models.Index(
                fields=["run_at", "id"],
                condition=models.Q(status="pending", organization__isnull=True),
                name="job_pending_system_run_at",
            ),
            # The in-flight caps: processing jobs per organization and seat with a live
            # heartbeat (`organization_id = ? AND seat = ? AND locked_at > now() - window`);
            # also scanned whole by stale recovery (`locked_at <= now() - window`), being
            # small.
            models.Index(
                fields=["organization", "seat", "locked_at"],
                condition=models.Q(status="processing"),
                name="job_processing_org",
            ),
            # Promotion of waiting jobs whose run_at has come.
            models.Index(
                fields=["run_at"],
                condition=models.Q(status="waiting"),
                name="job_waiting_run_at",
            ),
            # The metrics' recent windows: the jobs claimed or finished lately, whenever
            # they were created (`WHERE greatest(started_at, finished_at) > now() - window
            # AND started_at > ...`, or `AND finished_at > ...`): a range as long as the
            # window's work. Jobs never claimed nor finished (those scheduled ahead) are
            # not in it, so an enqueue does not write it.
            models.Index(
                Greatest("started_at", "finished_at"),
                condition=models.Q(started_at__isnull=False) | models.Q(finished_at__isnull=False),
                name="job_recent_activity",
            ),
            # Pruning walks the oldest rows (`created_at < cutoff AND finished_at < cutoff`).
            # BRIN: tiny, and nearly free to maintain on the hot path.
            BrinIndex(fields=["created_at"], name="job_created_at_brin"),
        ]

    def __str__(self) -> str:
        return f"{self.type}#{self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def is_last_attempt(self) -> bool:
        """True while running the attempt after which no automatic retry follows."""
        return self.attempts >= self.max_attempts


class QueueHead(models.Model):
    """Where each organization's queue of one seat and lane starts: the earliest `run_at` among its
    pending jobs, or a little earlier (never later while a pending job exists).

    The claim reads only the heads that are due (`next_run_at <= now()`, an index range),
    so its cost follows the organizations with work due, not every organization holding
    posts scheduled days ahead. Kept by the database itself: a trigger on jobs_job lowers
    the head whenever a job becomes pending earlier than it (every path: enqueue, retry,
    release, recovery, an operator's retry), and the claim raises it again once an
    organization's due work is taken (see apps.jobs.queue).

    Raising a head must never skip a job another transaction is making pending: the
    trigger holds a shared advisory lock of the organization's stripe (HEADS_LOCK_NAMESPACE,
    HEADS_LOCK_STRIPES) until its transaction ends, and the claim raises a head only after
    taking that lock exclusively (try-lock: skipped while anyone is enqueueing for an
    organization of the stripe), in a statement that starts after the lock is held, so it
    sees every committed job.

    `last_claimed_at` gives organizations turns: due heads are considered least recently
    served first.
    """

    # No database constraint: the trigger writes heads inside every job insert, and a
    # foreign-key check there would lock the organization row each time.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, db_constraint=False, related_name="+"
    )
    seat = models.CharField(max_length=16, choices=Seat.choices)
    lane = models.CharField(max_length=32, blank=True, db_default="")
    next_run_at = models.DateTimeField(null=True, blank=True, help_text="Null: none pending.")
    last_claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "seat", "lane"], name="queue_head_org_seat_lane"
            )
        ]
        indexes = [
            # The claim's first step: `WHERE next_run_at <= now()`.
            models.Index(
                fields=["next_run_at"],
                condition=models.Q(next_run_at__isnull=False),
                name="queue_head_due",
            )
        ]

    def __str__(self) -> str:
        lane = f"/{self.lane}" if self.lane else ""
        return f"{self.organization_id}/{self.seat}{lane} from {self.next_run_at}"


class WorkerProcessQuerySet(models.QuerySet):
    def running(self) -> WorkerProcessQuerySet:
        return self.filter(stopped_at__isnull=True)


class WorkerProcess(models.Model):
    """One `run_worker` process, registered at start and touched at every heartbeat, so
    operators (admin, /readyz) can see that workers are polling. `stopped_at` is set on a
    clean shutdown; a row whose `last_seen_at` is old belongs to a process that died."""

    name = models.CharField(max_length=200, unique=True, help_text="host:pid:random")
    host = models.CharField(max_length=200)
    pid = models.PositiveIntegerField()
    threads = models.PositiveIntegerField(default=1)
    types = models.JSONField(default=list, blank=True, help_text="Job types; empty: all.")
    started_at = models.DateTimeField(db_default=Now())
    last_seen_at = models.DateTimeField(db_default=Now())
    stopped_at = models.DateTimeField(null=True, blank=True)
    jobs_running = models.PositiveIntegerField(default=0, help_text="Claimed, not finished.")
    jobs_done = models.PositiveBigIntegerField(default=0, help_text="Outcomes written.")
    created_at = models.DateTimeField(db_default=Now())
    updated_at = models.DateTimeField(db_default=Now())

    objects = WorkerProcessQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "worker processes"
        indexes = [models.Index(fields=["last_seen_at"], name="worker_process_last_seen")]

    def __str__(self) -> str:
        return self.name

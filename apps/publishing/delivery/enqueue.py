"""Enqueueing delivery's jobs, and the hooks between rendition state and the publish job.

Services that change one rendition call the hooks inside their transaction, at exactly
these points:

- ``rendition_schedule_delivery``: a rendition became scheduled, or its effective time
  changed while scheduled (the publication or the rendition was rescheduled);
- ``rendition_cancel_delivery``: a scheduled (or retry-pending) rendition was cancelled,
  unscheduled back to draft, or removed from its publication.

Creating publications (one, or a bulk import) writes the new renditions' publish jobs
directly, in one statement with the same type and dedupe key (``PUBLISH_JOB``,
``publish_dedupe_key``; see ``apps.publishing.services.publications`` and ``bulk``): the
renditions are new, so no job can exist for them yet.

Each rendition has at most one unfinished publish job (its dedupe key), written in the same
transaction as the change: a schedule is always a database row, and it exists iff the
change commits.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from apps.common.db_clock import db_now
from apps.jobs import queue
from apps.jobs.models import Job
from apps.jobs.services import job_cancel, job_enqueue
from apps.renditions.models import Rendition

# Stored in every job row: these names outlive any move of the code that runs them.
PUBLISH_JOB = "renditions.publish"
POLL_JOB = "renditions.poll"
RECONCILE_JOB = "renditions.reconcile"


def publish_dedupe_key(rendition_id: int) -> str:
    return f"publish:{rendition_id}"


def reconcile_dedupe_key(rendition_id: int) -> str:
    return f"reconcile:{rendition_id}"


def poll_dedupe_key(rendition_id: int) -> str:
    return f"poll:{rendition_id}"


def schedule_publish(rendition: Rendition, *, run_at: datetime | None) -> Job:
    """Enqueue the rendition's publish job for run_at, or move its pending one there."""
    job = job_enqueue(
        type=PUBLISH_JOB,
        payload={"rendition_id": rendition.pk},
        organization=None,
        workspace=rendition.workspace,
        run_at=run_at,
        dedupe_key=publish_dedupe_key(rendition.pk),
        lane=rendition.platform,
    )
    if job.status == Job.Status.PENDING and run_at is not None and job.run_at != run_at:
        moved = Job.objects.filter(pk=job.pk, status=Job.Status.PENDING).update(
            run_at=run_at, updated_at=timezone.now()
        )
        if moved:
            job.run_at = run_at
            transaction.on_commit(queue.notify)
    return job


def rendition_schedule_delivery(rendition: Rendition) -> None:
    """Make the rendition due at its effective time (the publish job's run_at)."""
    if rendition.status != Rendition.Status.SCHEDULED:
        raise ValueError(f"Rendition {rendition.pk} is {rendition.status}, not scheduled.")
    schedule_publish(rendition, run_at=rendition.effective_scheduled_at or timezone.now())


def rendition_cancel_delivery(rendition: Rendition) -> None:
    """Drop the rendition's pending publish or retry job, if any. A job already running
    is not interrupted: it finds the rendition cancelled and does nothing."""
    job_cancel(dedupe_key=publish_dedupe_key(rendition.pk), reason="Rendition unscheduled.")
    if rendition.next_retry_at is not None:
        Rendition.objects.filter(pk=rendition.pk).update(next_retry_at=None)
        rendition.next_retry_at = None


def enqueue_poll(rendition: Rendition, state: dict, delay_s: float) -> None:
    """Enqueue the status poll of a segment the platform accepted and is processing."""
    job_enqueue(
        type=POLL_JOB,
        payload={"rendition_id": rendition.pk, **state},
        organization=None,
        workspace=rendition.workspace,
        run_at=db_now() + timedelta(seconds=delay_s),
        dedupe_key=poll_dedupe_key(rendition.pk),
    )

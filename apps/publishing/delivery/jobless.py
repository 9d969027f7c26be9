"""A write left pending with no job: a first comment or an inbox reply whose job ended
without settling it. The rule, shared by both flows' sweeps.

Each write is sent by its own job, which settles it (sent, failed, or unknown for a
person) in every case its handler decides. A job can still end without a decision: its
snooze budget spent on a platform throttling the lookup for hours, a dying worker or a run
past its time limit more often than its recoveries allow, a handler run that raised before
it could settle, an operator's cancel in the admin. Its write would then stay pending
forever, shown as on its way. The inbox and delivery sweeps find such writes every minute
and settle each by the handler's own rules:

- a send that may have made it (an attempt in flight, unanswered or lost, that no lookup
  nor person cleared since): ``unknown``, for a person to check, with the job's last error
  as the reason; never ``failed``, which invites a blind resend;
- nothing sent in doubt: ``failed``, with the reason, so a person can retry it in one
  click. Not a new job: the sweep cannot tell an operator's cancel (a new job would undo
  it every minute) from a lost enqueue without reading the job history, and a job that
  ended past its recoveries (a dying worker, a run past its time limit) would most likely
  end the same way again, every minute, with nobody told.

Cheap whatever the number of tenants: the candidates come from a partial index holding
pending writes only, each checked against the jobs' unique index of unfinished dedupe
keys, in bounded batches (as ``stranded`` does for renditions).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import connection

from apps.jobs.models import Job
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.publishing.delivery.unanswered import FAILED, UNKNOWN, Write

logger = logging.getLogger(__name__)

BATCH = 100


def candidate_ids(sql: str, *, limit: int = BATCH) -> list[int]:
    """The ids `sql` (pending writes with no unfinished job, oldest first) selects."""
    with connection.cursor() as cursor:
        cursor.execute(sql, [limit])
        return [row[0] for row in cursor.fetchall()]


def settle_all(ids: list[int], settle_one: Callable[[int], bool], write: Write) -> int:
    """Settle each write by `settle_one` (False: it was not jobless any more); one that
    raises is left for the next sweep. Returns how many were settled."""
    settled = 0
    for write_id in ids:
        try:
            settled += settle_one(write_id)
        except Exception:
            logger.exception(
                "Could not settle jobless %s %s; the next sweep tries again.", write.noun, write_id
            )
    return settled


def has_live_job(dedupe_key: str) -> bool:
    return Job.objects.unfinished().filter(dedupe_key=dedupe_key).exists()


def last_job_error(job_id: int | None) -> str:
    """How the write's last job ended, in words, from its row (by primary key)."""
    job = Job.objects.filter(pk=job_id).values("status", "last_error").first() if job_id else None
    if job is None:
        # No attempt names a job: it never sent (cancelled, stopped first, or never queued).
        return "its job ended before it sent anything (cancelled, or never queued)"
    error = job["last_error"] or {}
    kind = error.get("kind") or job["status"]
    message = (error.get("message") or "").strip()
    return f"its job {job['status']} ({kind}: {message})" if message else f"its job {kind}"


def verdict(
    write: Write, *, in_doubt: bool, job_error: str, check: str
) -> tuple[str, ProviderError]:
    """The status a jobless write is settled to, with its reason; `check` tells a person
    what to do when it may exist, in the words of its flow's pages."""
    if in_doubt:
        return UNKNOWN, ProviderError(
            ErrorKind.OUTCOME_UNKNOWN,
            f"The {write.noun} was sent without an answer and {job_error} before finding out "
            f"whether it was made; {check}.",
            code=f"{write.noun}_job_ended",
            action=Action.VERIFY,
        )
    return FAILED, ProviderError(
        ErrorKind.UNKNOWN,
        f"The {write.noun} was not sent: {job_error}. Nothing was sent; retry it.",
        code=f"{write.noun}_job_ended",
        action=Action.RETRY,
        retryable=False,
    )

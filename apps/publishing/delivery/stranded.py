"""Stranded deliveries: renditions in ``publishing`` or ``waiting`` that no unfinished job
is working on.

Every path that leaves a rendition in flight hands it to a job in the same transaction, so
none should exist; they do when the job itself ended without settling it: a database
outage that failed a job while its rendition was mid-delivery, an operator's cancel, a bug.
The due sweep finds them every minute and settles them as stale recovery would, by the
ambiguity rules, never by a blind resend:

- a segment the platform accepted and is processing: its status poll runs again;
- an attempt that was in flight (the request may have reached the platform): an ambiguous
  failure, looked up by reconciliation (or left to a person where the platform has no
  lookup) before anything is sent again;
- nothing in flight: released back to scheduled and published (segments that already
  have a post are skipped).

Cheap whatever the number of tenants: the candidates come from a partial index holding
in-flight renditions only (``rendition_in_flight``), each checked against the jobs' unique
index of unfinished dedupe keys, in bounded batches.
"""

from __future__ import annotations

import logging

from django.db import connection, transaction

from apps.jobs.models import Job
from apps.publishing.delivery.enqueue import (
    enqueue_poll,
    poll_dedupe_key,
    publish_dedupe_key,
    reconcile_dedupe_key,
)
from apps.publishing.delivery.publish import recover_publishing
from apps.publishing.delivery.waiting import accepted_work
from apps.publishing.locks import lock_rendition
from apps.publishing.services.status import publication_refresh_status
from apps.renditions.models import Rendition

logger = logging.getLogger(__name__)

IN_FLIGHT = (Rendition.Status.PUBLISHING, Rendition.Status.WAITING)

# The dedupe keys below are enqueue's (publish_dedupe_key, poll_dedupe_key,
# reconcile_dedupe_key), written out so the unique index of unfinished keys serves them.
STRANDED_SQL = """
SELECT r.id FROM renditions_rendition r
 WHERE r.status IN ('publishing', 'waiting')
   AND NOT EXISTS (
       SELECT 1 FROM jobs_job j
        WHERE j.dedupe_key IN ('publish:' || r.id, 'poll:' || r.id, 'reconcile:' || r.id)
          AND j.status IN ('pending', 'processing', 'waiting'))
 ORDER BY r.id
 LIMIT %s
"""


def stranded_rendition_ids(*, limit: int = 100) -> list[int]:
    """In-flight renditions with no unfinished job of theirs, oldest first."""
    with connection.cursor() as cursor:
        cursor.execute(STRANDED_SQL, [limit])
        return [row[0] for row in cursor.fetchall()]


def settle_stranded(*, limit: int = 100) -> int:
    """Settle up to `limit` stranded renditions (see the module docstring); returns how
    many were settled."""
    settled = 0
    for rendition_id in stranded_rendition_ids(limit=limit):
        try:
            settled += settle_one(rendition_id)
        except Exception:
            logger.exception(
                "Could not settle stranded rendition %s; the next sweep tries again.",
                rendition_id,
                extra={"rendition_id": rendition_id},
            )
    return settled


def settle_one(rendition_id: int) -> bool:
    """Settle one stranded rendition under its locks; False when it was not stranded any
    more (a job took it, or it moved on) by the time its lock was held."""
    with transaction.atomic():
        rendition = lock_rendition(rendition_id)
        if rendition.status not in IN_FLIGHT or has_live_job(rendition.pk):
            return False
        accepted = accepted_work(rendition)
        if rendition.status == Rendition.Status.WAITING and accepted is not None:
            # The platform holds the work: only its status poll may go on with it.
            enqueue_poll(rendition, {**accepted, "polls": 0, "poll_errors": 0}, 0.0)
            how = "its status poll runs again"
        else:
            if rendition.status == Rendition.Status.WAITING:
                rendition.transition_to(Rendition.Status.PUBLISHING)
            recover_publishing(rendition, worker="")
            how = f"recovered to {rendition.status}" + (
                " (ambiguous: looked up before any resend)" if rendition.ambiguous else ""
            )
        publication_refresh_status(rendition.publication)
    logger.warning(
        "Stranded rendition %s had no job; %s.",
        rendition_id,
        how,
        extra={"rendition_id": rendition_id},
    )
    return True


def has_live_job(rendition_id: int) -> bool:
    keys = [
        publish_dedupe_key(rendition_id),
        poll_dedupe_key(rendition_id),
        reconcile_dedupe_key(rendition_id),
    ]
    return Job.objects.unfinished().filter(dedupe_key__in=keys).exists()

"""The hooks between rendition state and the publish pipeline.

Services call them inside their transaction, at exactly these points:

- ``rendition_schedule_delivery``: a rendition became scheduled, or its effective time
  changed while scheduled (the publication or the rendition was rescheduled);
- ``rendition_cancel_delivery``: a scheduled (or retry-pending) rendition was cancelled,
  unscheduled back to draft, or removed from its publication.

The publish pipeline enqueues, moves or cancels the rendition's publish job here, so a
schedule is always a database row written in the same transaction as the change. Until it
is wired, they only keep the rendition's own fields consistent.
"""

import logging

from apps.renditions.models import Rendition

logger = logging.getLogger(__name__)


def rendition_schedule_delivery(rendition: Rendition) -> None:
    """Make the rendition due at its effective time (the publish job's run_at)."""
    if rendition.status != Rendition.Status.SCHEDULED:
        raise ValueError(f"Rendition {rendition.pk} is {rendition.status}, not scheduled.")
    logger.info(
        "rendition scheduled",
        extra={"rendition_id": rendition.pk, "run_at": rendition.effective_scheduled_at},
    )


def rendition_cancel_delivery(rendition: Rendition) -> None:
    """Drop the rendition's pending publish or retry job, if any."""
    if rendition.next_retry_at is not None:
        Rendition.objects.filter(pk=rendition.pk).update(next_retry_at=None)
        rendition.next_retry_at = None
    logger.info("rendition delivery cancelled", extra={"rendition_id": rendition.pk})

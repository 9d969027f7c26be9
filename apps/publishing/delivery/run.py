"""One delivery job's run on one rendition: what it carries, how it stops once its outcome
is written, and the facts about the platform it records whatever its lease."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from apps.accounts.models import SocialAccount
from apps.common.db_clock import db_now
from apps.jobs.models import Job
from apps.providers.base import Adapter, PublishContext, PublishedSegment
from apps.publishing.delivery.context import write_checkpoint
from apps.renditions.errors import SegmentAlreadyPublished
from apps.renditions.models import Rendition, RenditionSegment

__all__ = ["Run", "Stop", "db_now", "record_segment", "save_checkpoint", "seconds_until"]


class Stop(Exception):  # noqa: N818 - control flow inside a run
    """Ends a run after its outcome was written; carries what the job should become."""

    def __init__(self, outcome: Exception | None = None) -> None:
        super().__init__("stop")
        self.outcome = outcome


@dataclass
class Run:
    """One job's work on one rendition."""

    job: Job
    rendition: Rendition
    adapter: Adapter
    ctx: PublishContext

    @property
    def account(self) -> SocialAccount:
        return self.rendition.social_account


def seconds_until(instant: datetime | None, *, now: datetime | None = None) -> float:
    """Seconds from `now` (default: the database clock) until `instant`; 0 when there is
    none or it has passed. A platform's Retry-After becomes the floor of the job type's
    backoff this way."""
    if instant is None:
        return 0.0
    return max((instant - (now or db_now())).total_seconds(), 0.0)


def save_checkpoint(run: Run) -> None:
    """Persist what the adapter recorded in the checkpoint, if it did not itself."""
    if run.ctx.checkpoint != (run.rendition.checkpoint or {}):
        write_checkpoint(run.rendition, dict(run.ctx.checkpoint))


def record_segment(segment: RenditionSegment, result: PublishedSegment) -> None:
    """Store the segment's provider id: the truth about the platform, kept even if the
    lease was lost meanwhile (the guarded write never overwrites an earlier id)."""
    try:
        segment.mark_published(result.provider_post_id, result.provider_url, result.published_at)
    except SegmentAlreadyPublished:
        segment.refresh_from_db()

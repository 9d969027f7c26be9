"""A publication's status as the aggregate of its renditions' statuses (DESIGN §5)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from apps.publications.models import Publication
from apps.renditions.models import Rendition

P = Publication.Status
R = Rendition.Status


@dataclass(frozen=True)
class RenditionState:
    status: str
    retry_pending: bool = False  # failed, with an automatic retry scheduled


def aggregate_status(states: Iterable[RenditionState], *, current: str = P.DRAFT) -> str:
    """The publication status for these rendition states.

    1. No renditions: draft (a cancelled publication stays cancelled).
    2. All cancelled: cancelled. Otherwise cancelled renditions are ignored.
    3. All draft: draft.
    4. Nothing started (only draft and scheduled): scheduled.
    5. Any publishing or waiting: publishing.
    6. Work remains beside finished renditions (a scheduled or draft one, or a failed one
       with a retry pending): publishing.
    7. All finished (published, or failed with no retry pending, ambiguous included):
       all published -> published; all failed -> failed; a mix -> partially_published.
    """
    states = list(states)
    if not states:
        return P.CANCELLED if current == P.CANCELLED else P.DRAFT
    live = [s for s in states if s.status != R.CANCELLED]
    if not live:
        return P.CANCELLED
    statuses = {s.status for s in live}
    if statuses == {R.DRAFT}:
        return P.DRAFT
    if statuses <= {R.DRAFT, R.SCHEDULED}:
        return P.SCHEDULED
    if statuses & {R.PUBLISHING, R.WAITING}:
        return P.PUBLISHING
    if statuses & {R.DRAFT, R.SCHEDULED} or any(s.retry_pending for s in live):
        return P.PUBLISHING
    if statuses == {R.PUBLISHED}:
        return P.PUBLISHED
    if statuses == {R.FAILED}:
        return P.FAILED
    return P.PARTIALLY_PUBLISHED

"""Creating many publications at once (the API's bulk endpoint, the web's CSV import).

A bulk create is the create pipeline (``create_pipeline``) over a batch of up to
MAX_BULK_ITEMS items, each refused or created on its own: every item is read and checked
exactly as ``publication_create`` checks one (same fields, same rules, same error codes,
the approval rule included), except that an item whose ``reference_key`` already exists
in the workspace is answered with that publication (``exists``) instead of
REFERENCE_KEY_EXISTS, so running an import again creates nothing twice. One bad item
never blocks the others; a batch of 500 costs a handful of statements, not 500 times one
create's.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from apps.accounts.models import User, Workspace
from apps.common import table_stats
from apps.common.errors import ValidationFailed
from apps.jobs.models import Job
from apps.publications.models import Publication, PublicationSegment, SegmentMedia
from apps.publishing.services.create_pipeline import Outcome, create_publications
from apps.renditions.models import Rendition, RenditionMedia, RenditionSegment

MAX_BULK_ITEMS = 500
# The tables a bulk create writes (their statistics are refreshed as they grow).
WRITTEN_MODELS = (
    Publication,
    PublicationSegment,
    SegmentMedia,
    Rendition,
    RenditionSegment,
    RenditionMedia,
    Job,
)


def publications_bulk_create(
    *, workspace: Workspace, author: User | None, items: list[Any]
) -> list[Outcome]:
    """Create one publication per item (each item as ``publication_create`` takes it, a
    top-level ``text`` being shorthand for one segment), in one transaction; returns one
    outcome per item, in order.

    Per-item errors are the single create's: ValidationFailed (details by field path),
    ApprovalRequired APPROVAL_REQUIRED for a scheduled item by someone whose posts need
    approval first, NotFound for accounts or media not in the workspace, QuotaExceeded
    MONTHLY_QUOTA_EXCEEDED or DAILY_CAP_EXCEEDED. More than MAX_BULK_ITEMS items is a
    ValidationFailed TOO_MANY_ITEMS for the whole call, and nothing is created.
    """
    if len(items) > MAX_BULK_ITEMS:
        raise ValidationFailed(
            f"At most {MAX_BULK_ITEMS} items a request; this one has {len(items)}.",
            code="TOO_MANY_ITEMS",
            details={"items": [f"At most {MAX_BULK_ITEMS} items."]},
        )
    with transaction.atomic():
        outcomes = create_publications(
            workspace=workspace,
            author=author,
            items=items,
            existing_keys_answer=True,
            all_or_nothing=False,
        )
        # Once committed: statistics that still describe the tables as small make every
        # later import's foreign-key checks scan them whole (apps.common.table_stats).
        transaction.on_commit(lambda: table_stats.analyze_stale(WRITTEN_MODELS), robust=True)
        return outcomes

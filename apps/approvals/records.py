"""What each step of a post's review leaves behind: its comment (the note, possibly
empty), the PUBLICATION_REVIEW_CHANGED event (webhooks, the audit log) and, once the
transaction commits, the emails to the people who act next."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from apps.approvals import notices
from apps.approvals.models import PortalLink, Review, ReviewComment
from apps.common import events

if TYPE_CHECKING:
    from apps.accounts.models import User
    from apps.publications.models import Publication


def review_record(
    publication: Publication,
    review: Review,
    actor: User | None,
    kind: str,
    note: str,
    *,
    via: PortalLink | None = None,
) -> None:
    """Record one step; ``via``: the client link it came through (the step is the
    client's, ``actor`` is not named)."""
    ReviewComment.objects.create(
        publication=publication,
        workspace_id=publication.workspace_id,
        author=None if via is not None else actor,
        portal_link=via,
        kind=kind,
        body=note,
    )
    named = None if via is not None else actor
    events.emit(
        events.PUBLICATION_REVIEW_CHANGED,
        publication=publication,
        review=review.state,
        actor=named,
        note=note,
    )
    transaction.on_commit(lambda: notices.review_changed(review, actor=named, note=note))

"""Applying an edit to a publication that already has renditions: new source segments,
a new destinations list, and a new intent (draft or scheduled).

Renditions that went out, are in flight or were cancelled are never rewritten: an edit
may list them unchanged, but changing or removing them is a RENDITION_LOCKED conflict.
"""

from __future__ import annotations

from datetime import datetime

from apps.accounts.models import SocialAccount
from apps.common.errors import Conflict
from apps.publications.inputs import DestinationInput, SegmentInput
from apps.publications.models import Publication, PublicationSegment
from apps.publishing.delivery import enqueue
from apps.publishing.services import content as _content
from apps.renditions.models import Rendition

R = Rendition.Status
P = Publication.Status


def _locked_rendition(rendition: Rendition, field: str, what: str) -> Conflict:
    account = rendition.social_account
    return Conflict(
        f"The {account.platform} destination @{account.handle} is {rendition.status}; {what}",
        code="RENDITION_LOCKED",
        details={
            "field": field,
            "rendition": rendition.pk,
            "account": account.pk,
            "status": rendition.status,
        },
    )


def unschedule(rendition: Rendition, *, remove: bool) -> None:
    """Take a rendition off the schedule: back to draft, or removed from the publication
    (draft and scheduled ones are deleted, failed ones cancelled to keep their history)."""
    if remove and rendition.status == R.FAILED:
        rendition.mark_cancelled()
    elif rendition.status == R.SCHEDULED:
        rendition.mark_draft()
    enqueue.rendition_cancel_delivery(rendition)
    if remove and rendition.status == R.DRAFT:
        rendition.delete()


def apply_destinations(
    publication: Publication,
    renditions: list[Rendition],
    destinations: list[DestinationInput],
    *,
    accounts: dict[int, SocialAccount],
    media: dict,
    times: dict[str, datetime | None],
    sources: list[PublicationSegment],
) -> tuple[list[tuple[Rendition, str]], set[int]]:
    """Reconcile the renditions with a new destinations list (each entry read as at
    creation). Returns ([(rendition, path)] in the new order, ids of new renditions).
    Renditions that already went out (or are in flight, or cancelled) may be listed
    unchanged but not changed or removed."""
    by_account = {r.social_account_id: r for r in renditions}
    source = _content.source_content(publication)
    result: list[tuple[Rendition, str]] = []
    created: set[int] = set()
    for dest in destinations:
        rendition = by_account.pop(dest.account_id, None)
        own_time = times[dest.path]
        content = _content.input_content(dest.segments, media) if dest.segments else source
        if rendition is None:
            rendition = _content.create_rendition(
                publication=publication,
                account=accounts[dest.account_id],
                destination=dest,
                content=content,
                sources=sources,
                scheduled_at=own_time,
            )
            created.add(rendition.pk)
            result.append((rendition, dest.path))
            continue
        overrides = dest.segments is not None
        if overrides:
            content_changed = not rendition.overrides_content or (
                content != _content.rendition_content(rendition)
            )
        else:
            # Following the source: the segments step already rewrote it if it may change;
            # a rendition that went out keeps what it published.
            content_changed = rendition.overrides_content
        changed = (
            content_changed
            or dest.settings != rendition.settings
            or own_time != rendition.scheduled_at
        )
        if changed and not rendition.is_content_editable:
            raise _locked_rendition(rendition, dest.path, "it can no longer be changed.")
        if changed:
            rendition.settings = dest.settings
            rendition.scheduled_at = own_time
            rendition.overrides_content = overrides
            rendition.full_clean(
                exclude=["publication", "workspace", "social_account"],
                validate_unique=False,
                validate_constraints=False,
            )
            rendition.save(update_fields=["settings", "scheduled_at", "overrides_content"])
            if content_changed:
                _content.write_rendition_content(rendition, content, sources)
        result.append((rendition, dest.path))

    for rendition in by_account.values():
        if rendition.status == R.CANCELLED:
            continue
        if not rendition.is_content_editable:
            raise _locked_rendition(rendition, "destinations", "it cannot be removed.")
        unschedule(rendition, remove=True)
    return result, created


def apply_segments(
    publication: Publication,
    renditions: list[Rendition],
    segments: list[SegmentInput],
    media: dict,
) -> list[PublicationSegment]:
    """Replace the source segments and rewrite the renditions that follow the source and
    may still change; returns the new source segment rows."""
    _content.freeze_inherited_text(renditions)
    sources = _content.write_source_segments(publication, segments, media)
    source = _content.source_content(publication)
    for rendition in renditions:
        if not rendition.overrides_content and rendition.is_content_editable:
            _content.write_rendition_content(rendition, source, sources)
    return sources


def apply_intent(
    publication: Publication,
    renditions: list[tuple[Rendition, str]],
    *,
    target: str | None,
    created: set[int],
    now: datetime,
) -> set[int]:
    """Apply the status an edit asks for and return the ids of drafts to schedule.

    An explicit target wins: "draft" unschedules every scheduled rendition, "scheduled"
    schedules every draft. Without one, new destinations join the publication's current
    intent: a draft stays a draft, anything else is due. Scheduling without a time means
    now."""
    intent = target or (P.DRAFT if publication.status == P.DRAFT else P.SCHEDULED)
    if intent == P.DRAFT:
        for rendition, _path in renditions:
            if rendition.status == R.SCHEDULED:
                unschedule(rendition, remove=False)
        return set()
    newly = {r.pk for r, _ in renditions if r.status == R.DRAFT}
    if target != P.SCHEDULED:
        newly &= created
    if newly and publication.scheduled_at is None:
        publication.scheduled_at = now
    return newly

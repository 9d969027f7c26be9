"""Rewriting one failed destination's text and sending it again, from the post's page:
the platform refused what it got (content rejected), so the person gives that
destination its own text and retries it, whatever happened to the other destinations.

The edit goes through `publication_update` (the destinations list as it stands, this one
with its own parts), at the revision the form was opened at, and the retry through
`rendition_retry`, in one transaction: either both happen or neither.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import prefetch_related_objects

from apps.accounts.models import User
from apps.common.errors import ValidationFailed
from apps.providers.validation import MediaInfo, validate_rendition
from apps.publishing.services import publication_update, rendition_retry
from apps.renditions.models import Rendition
from apps.renditions.selectors import account_text_limit
from apps.web.composer.sent import SentPart, sent_parts


def _segments(parts: list[SentPart], texts: list[str] | None = None) -> list[dict]:
    """Parts as the services' segment input; with texts, those replace the parts' texts
    and a part left with neither text nor media is dropped."""
    segments = []
    for i, part in enumerate(parts):
        text = part.text if texts is None else (texts[i] if i < len(texts) else "")
        media = [{"id": m.media_id, "alt_text": m.alt_text} for m in part.media]
        if texts is not None and not text.strip() and not media:
            continue
        segments.append({"text": text, "media": media})
    return segments


def _as_listed(rendition: Rendition) -> dict:
    """A destination entry that leaves the rendition as it is."""
    entry: dict = {"account": rendition.social_account_id, "settings": rendition.settings}
    if rendition.scheduled_at is not None:
        entry["scheduled_at"] = rendition.scheduled_at.isoformat()
    if rendition.overrides_content:
        entry["segments"] = _segments(sent_parts(rendition))
    return entry


def _check(rendition: Rendition, segments: list[dict], parts: list[SentPart]) -> None:
    """The platform's rules on the new text, before anything is written."""
    if not segments:
        raise ValidationFailed(
            "Write something for this destination.",
            details={"segments": ["Write something for this destination."]},
        )
    media_by_id = {m.media_id: m.media for part in parts for m in part.media}
    problems = validate_rendition(
        rendition.platform,
        [s["text"] for s in segments],
        rendition.settings,
        [
            [
                MediaInfo(
                    kind=media_by_id[m["id"]].kind,
                    mime_type=media_by_id[m["id"]].mime_type,
                    size_bytes=media_by_id[m["id"]].size_bytes,
                    width=media_by_id[m["id"]].width,
                    height=media_by_id[m["id"]].height,
                    duration_s=media_by_id[m["id"]].duration_s,
                    alt_text=m["alt_text"],
                )
                for m in s["media"]
            ]
            for s in segments
        ],
        text_limit=account_text_limit(rendition.social_account),
    )
    if problems:
        details: dict[str, list[str]] = {}
        for problem in problems:
            details.setdefault(problem.path, []).append(problem.message)
        raise ValidationFailed(f"{rendition.platform} would refuse this text.", details=details)


@transaction.atomic
def destination_edit_and_retry(
    *, rendition: Rendition, texts: list[str], expected_revision: int, user: User
) -> Rendition:
    """Give the failed rendition these texts (one per part it has; its media stay) and
    retry it now. Raises ValidationFailed (the platform's rules, details by path such as
    ``segments.0.text``), Conflict REVISION_CONFLICT (the post changed since the form was
    opened) and the retry's refusals, with nothing written."""
    prefetch_related_objects([rendition], "segments__media__media")  # the checks read media
    parts = sent_parts(rendition)
    segments = _segments(parts, texts)
    _check(rendition, segments, parts)
    publication = rendition.publication
    destinations = []
    live = publication.renditions.exclude(status=Rendition.Status.CANCELLED).order_by("pk")
    for other in live.select_related("social_account"):
        if other.pk == rendition.pk:
            entry = {**_as_listed(other), "segments": segments}
        else:
            entry = _as_listed(other)
        destinations.append(entry)
    publication_update(
        publication=publication,
        expected_revision=expected_revision,
        destinations=destinations,
        actor=user,
    )
    rendition.refresh_from_db()
    return rendition_retry(rendition=rendition, user=user)

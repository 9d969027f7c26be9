"""The API's publication written straight from its JSON row (the value
``with_publication_rows`` reads), as ``PublicationSerializer`` writes the same publication
loaded into model instances: the same fields, in the same order, with the same values (a
test compares the two on every kind of row). A list page is written this way: loading
fifty publications' rows into model instances and running the serializers over them cost
more than the query that read them.

What is not a column as it is: times (written as DRF writes a date and time, in the
current time zone), a destination's due time (its own, else the publication's), its
segments' text (their own, else the source segment's), the media's alt text (the link's,
else the media's), the account's handle (the joined account), the error (through the
error serializer itself) and the first comment (only once the post is live).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework import ISO_8601, serializers
from rest_framework.settings import api_settings

from apps.api.serializers.renditions import RenditionErrorSerializer
from apps.common.json_rows import related_key
from apps.renditions.models import Rendition

Row = Mapping[str, Any]
_SEGMENTS = related_key("segments")
_MEDIA_LINKS = related_key("media_links")
_MEDIA = related_key("media")
_RENDITIONS = related_key("renditions")
_ACCOUNT = related_key("social_account")
_ATTEMPTS = related_key("delivery_attempts")
_FIRST_COMMENT = related_key("first_comment")
_PUBLISHED = Rendition.Status.PUBLISHED.value

# Shared: it keeps no state between rows (its fields are bound once, here).
_ERROR = RenditionErrorSerializer()
_ERROR.fields  # noqa: B018 - bound at import, not by the first of two threads


def publication_representations(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Each publication's representation, as PublicationSerializer(many=True) writes it."""
    when = _time_writer()
    return [_publication(row, when) for row in rows]


def _time_writer() -> Callable[[str | None], str | None]:
    """How a date and time read from JSON is written: as DRF's DateTimeField writes the
    datetime the model field would have loaded, in the current time zone. Each distinct
    value is worked out once a page (a page repeats a post's time in each destination)."""
    field = serializers.DateTimeField()
    zone = field.default_timezone()
    if zone is None or str(api_settings.DATETIME_FORMAT).lower() != ISO_8601:

        def exact(value: str | None) -> str | None:
            return field.to_representation(parse_datetime(value)) if value else None

        return exact
    written: dict[str, str] = {}

    def write(value: str | None) -> str | None:
        if not value:
            return None
        text = written.get(value)
        if text is None:
            moment = parse_datetime(value)
            if moment is None or timezone.is_naive(moment):
                return field.to_representation(moment)
            text = moment.astimezone(zone).isoformat()
            if text.endswith("+00:00"):
                text = text[:-6] + "Z"
            written[value] = text
        return text

    return write


def _publication(row: Row, when: Callable[[str | None], str | None]) -> dict[str, Any]:
    segments = row.get(_SEGMENTS) or []
    texts = {segment["id"]: segment["text"] for segment in segments}
    scheduled_at = row["scheduled_at"]
    return {
        "id": row["id"],
        "status": row["status"],
        "revision": row["revision"],
        "scheduled_at": when(scheduled_at),
        "timezone": row["timezone"],
        "reference_key": row["reference_key"],
        "first_comment": row["first_comment"],
        "segments": [
            {
                "position": segment["position"],
                "text": segment["text"],
                "media": [_segment_media(link) for link in segment.get(_MEDIA_LINKS) or []],
            }
            for segment in segments
        ],
        "renditions": [
            _rendition(rendition, scheduled_at, texts, when)
            for rendition in row.get(_RENDITIONS) or []
        ],
        "created_at": when(row["created_at"]),
        "updated_at": when(row["updated_at"]),
    }


def _segment_media(link: Row) -> dict[str, Any]:
    alt_text = link["alt_text"] or (link.get(_MEDIA) or {}).get("alt_text")
    return {"id": link["media_id"], "alt_text": alt_text}


def _rendition(
    rendition: Row,
    publication_scheduled_at: str | None,
    texts: Mapping[int, str],
    when: Callable[[str | None], str | None],
) -> dict[str, Any]:
    account = rendition.get(_ACCOUNT) or {}
    last_error = rendition["last_error"]
    return {
        "id": rendition["id"],
        "publication": rendition["publication_id"],
        "account": rendition["social_account_id"],
        "account_handle": account["handle"] if account.get("id") is not None else None,
        "platform": rendition["platform"],
        "status": rendition["status"],
        "scheduled_at": when(rendition["scheduled_at"] or publication_scheduled_at),
        "published_at": when(rendition["published_at"]),
        "provider_post_id": rendition["provider_post_id"],
        "provider_url": rendition["provider_url"],
        "attempts": rendition["attempts"],
        "next_retry_at": when(rendition["next_retry_at"]),
        "ambiguous": rendition["ambiguous"],
        "manual_retry_count": rendition["manual_retry_count"],
        "error": None if last_error is None else _ERROR.to_representation(last_error),
        "settings": rendition["settings"],
        "segments": [_rendition_segment(s, texts, when) for s in rendition.get(_SEGMENTS) or []],
        "delivery_attempts": [_attempt(a, when) for a in rendition.get(_ATTEMPTS) or []],
        "first_comment": _first_comment(rendition, when),
    }


def _rendition_segment(
    segment: Row, texts: Mapping[int, str], when: Callable[[str | None], str | None]
) -> dict[str, Any]:
    text = segment["own_text"]
    if text is None:
        source = segment["source_segment_id"]
        text = texts.get(source, "") if source else ""
    return {
        "position": segment["position"],
        "text": text,
        "media": [
            {"id": media["media_id"], "alt_text": media["alt_text"]}
            for media in segment.get(_MEDIA) or []
        ],
        "provider_post_id": segment["provider_post_id"],
        "provider_url": segment["provider_url"],
        "published_at": when(segment["published_at"]),
    }


def _attempt(attempt: Row, when: Callable[[str | None], str | None]) -> dict[str, Any]:
    return {
        "id": attempt["id"],
        "kind": attempt["kind"],
        "outcome": attempt["outcome"],
        "segment_position": attempt["segment_position"],
        "idempotency_key": attempt["idempotency_key"],
        "started_at": when(attempt["started_at"]),
        "finished_at": when(attempt["finished_at"]),
        "error": attempt["error"],
        "provider_post_id": attempt["provider_post_id"],
        "provider_url": attempt["provider_url"],
        "note": attempt["note"],
    }


def _first_comment(
    rendition: Row, when: Callable[[str | None], str | None]
) -> dict[str, Any] | None:
    if rendition["status"] != _PUBLISHED:
        return None  # made when the post goes live
    comments = rendition.get(_FIRST_COMMENT) or []
    if not comments:
        return None
    comment = comments[0]
    last_error = comment["last_error"]
    return {
        "id": comment["id"],
        "text": comment["text"],
        "status": comment["status"],
        "provider_comment_id": comment["provider_comment_id"],
        "provider_url": comment["provider_url"],
        "published_at": when(comment["published_at"]),
        "error": None if last_error is None else _ERROR.to_representation(last_error),
    }

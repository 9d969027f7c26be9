"""Reads about renditions that several clients share."""

from __future__ import annotations

from django.db.models import prefetch_related_objects

from apps.accounts.models import SocialAccount
from apps.providers.validation import MediaInfo, Problem, validate_rendition
from apps.renditions.models import Rendition


def account_text_limit(account: SocialAccount) -> int | None:
    """A per-account text limit recorded in the account's settings (``text_limit``: a
    sandbox behaviour, an instance's configured maximum, an X Premium account), or None
    to use the catalog's."""
    value = (account.settings or {}).get("text_limit")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def rendition_problems(rendition: Rendition) -> list[Problem]:
    """Every problem of the rendition against its platform's capabilities, with paths
    relative to the rendition (``segments.0.text``, ``settings.title``)."""
    # Uses what the caller prefetched (one query per table for many renditions), else loads.
    prefetch_related_objects([rendition], "segments__media__media")
    segments = sorted(rendition.segments.all(), key=lambda segment: segment.position)
    texts = [segment.text for segment in segments]
    media = [
        [
            MediaInfo(
                kind=link.media.kind,
                mime_type=link.media.mime_type,
                size_bytes=link.media.size_bytes,
                width=link.media.width,
                height=link.media.height,
                duration_s=link.media.duration_s,
                alt_text=link.alt_text,
            )
            for link in segment.media.all()
        ]
        for segment in segments
    ]
    return validate_rendition(
        rendition.platform,
        texts,
        rendition.settings,
        media,
        text_limit=account_text_limit(rendition.social_account),
    )

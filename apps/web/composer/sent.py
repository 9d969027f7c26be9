"""What each destination gets: its parts' text, media and, once live, the address of each
part on the platform. Every page reads a rendition's text through `segment_text`."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import prefetch_related_objects

from apps.renditions.models import Rendition, RenditionMedia, RenditionSegment


def segment_text(segment: RenditionSegment) -> str:
    """The text this destination's part says (its own, or the source part's it follows)."""
    return segment.text


@dataclass(frozen=True)
class SentPart:
    position: int
    text: str
    provider_url: str
    is_published: bool
    media: list[RenditionMedia] = field(default_factory=list)


def sent_parts(rendition: Rendition) -> list[SentPart]:
    """The rendition's parts in thread order, from its segments and their media as the
    caller prefetched them (the post's page reads them with the publication), else loaded
    here."""
    prefetch_related_objects([rendition], "segments__media")
    segments = sorted(rendition.segments.all(), key=lambda segment: segment.position)
    return [
        SentPart(
            position=segment.position,
            text=segment_text(segment),
            provider_url=segment.provider_url,
            is_published=segment.is_published,
            media=list(segment.media.all()),
        )
        for segment in segments
    ]

"""What a client sees through a link: each post as it will go out on each destination
(every part's text and media, the first comment, the time in the post's own zone), its
review, and whether they may decide on it now. Media are served by signed, expiring URLs,
since the client has no session."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from apps.approvals.models import PortalLink, Review
from apps.approvals.portal import PAGE_SIZE, portal_publications
from apps.common.media_urls import signed_media_url
from apps.publications.models import MediaAsset, Publication
from apps.publishing.selectors import publication_page
from apps.renditions.models import Rendition

# What a member is told when their change sent a post a client approved back to them
# (``apps.publishing.services.approval``): it is a draft again, in review.
SENT_BACK_TO_CLIENT = (
    "Saved. A client approved this post through their link, so the change sent it back "
    "to them: it is off the schedule until they approve it again."
)
# A page's media links outlive a long look at it, not the link itself.
MEDIA_URL_S = 2 * 3600
DECIDABLE = frozenset({Review.State.IN_REVIEW, Review.State.ON_HOLD})
HOLDABLE = frozenset({Review.State.IN_REVIEW, Review.State.APPROVED})
NOT_STARTED = Rendition.NOT_STARTED


@dataclass(frozen=True)
class PortalMedia:
    url: str
    kind: str
    alt_text: str


@dataclass(frozen=True)
class PortalPart:
    text: str
    media: list[PortalMedia] = field(default_factory=list)


@dataclass(frozen=True)
class PortalDestination:
    platform: str
    handle: str
    status: str
    at: datetime | None
    parts: list[PortalPart]
    first_comment: str


@dataclass(frozen=True)
class PortalPost:
    publication: Publication
    review: Review | None
    destinations: list[PortalDestination]

    @property
    def can_decide(self) -> bool:
        """Waiting for a decision: in review, or on hold."""
        return self.review is not None and self.review.state in DECIDABLE

    @property
    def can_hold(self) -> bool:
        """In review, or approved with nothing gone out yet."""
        if self.review is None or self.review.state not in HOLDABLE:
            return False
        return all(d.status in NOT_STARTED for d in self.destinations)


def _media(ids: set[int]) -> dict[int, PortalMedia]:
    assets = MediaAsset.objects.filter(pk__in=ids).only("pk", "file", "kind", "alt_text")
    return {
        asset.pk: PortalMedia(
            url=signed_media_url(asset.file, MEDIA_URL_S), kind=asset.kind, alt_text=asset.alt_text
        )
        for asset in assets
    }


def _destination(
    rendition: Rendition, publication: Publication, media: dict[int, PortalMedia]
) -> PortalDestination:
    parts = []
    for segment in sorted(rendition.segments.all(), key=lambda s: s.position):
        shown = []
        for link in sorted(segment.media.all(), key=lambda m: m.position):
            asset = media.get(link.media_id)
            if asset is not None:
                alt_text = link.alt_text or asset.alt_text
                shown.append(PortalMedia(url=asset.url, kind=asset.kind, alt_text=alt_text))
        parts.append(PortalPart(text=segment.text, media=shown))
    # A live post keeps the comment it was given; the others get the post's own.
    sent = getattr(rendition, "first_comment", None)
    comment = sent.text if sent is not None else publication.first_comment or ""
    return PortalDestination(
        platform=rendition.platform,
        handle=rendition.social_account.handle,
        status=rendition.status,
        at=rendition.scheduled_at or publication.scheduled_at,
        parts=parts,
        first_comment=comment,
    )


def portal_posts(link: PortalLink) -> list[PortalPost]:
    """The link's posts (at most PAGE_SIZE, the earliest planned first), each read whole
    in one query, their reviews and media files in one query each."""
    pks = list(portal_publications(link).values_list("pk", flat=True)[:PAGE_SIZE])
    publications = publication_page(Publication.objects.for_workspace(link.workspace_id), pks)
    reviews = {r.publication_id: r for r in Review.objects.filter(publication_id__in=pks)}
    live = {
        p.pk: [r for r in p.renditions.all() if r.status != Rendition.Status.CANCELLED]
        for p in publications
    }
    media_ids = {
        m.media_id
        for renditions in live.values()
        for r in renditions
        for s in r.segments.all()
        for m in s.media.all()
    }
    media = _media(media_ids)
    return [
        PortalPost(
            publication=p,
            review=reviews.get(p.pk),
            destinations=[_destination(r, p, media) for r in live[p.pk]],
        )
        for p in publications
    ]

"""How the post will look on each destination, while it is written: the account as the
network shows it (name, handle, initials), the text cut where the platform's limit cuts
it (counted the platform's way), the parts as a thread where the platform threads them,
a link card for the first link, and the media in order, framed the way that network's
feed frames them.

Nothing is fetched: a link card shows the link's domain and address only (the page's own
title is read once, at publish time, by the platforms that need it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.urls import reverse

from apps.accounts.models import SocialAccount, Workspace
from apps.providers.text_counting import Counter, count_text, find_urls, graphemes
from apps.renditions.selectors import account_text_limit
from apps.web.composer.draft import DestinationDraft, Draft, MediaDraft

# How each feed frames a single image in the timeline (width / height), where it crops
# one: Instagram's feed keeps 4:5 to 1.91:1 and shows a square in the grid, TikTok and
# Reels are full-height 9:16, Pinterest pins are 2:3. Elsewhere the image keeps its own
# shape (within the feed's width), so no crop is drawn.
FEED_FRAMES: dict[str, tuple[int, int]] = {
    "instagram": (4, 5),
    "tiktok": (9, 16),
    "pinterest": (2, 3),
    "youtube": (16, 9),
    "x": (16, 9),
    "linkedin": (191, 100),
}
# Networks that show a card for the first link of a post without media.
LINK_CARD_PLATFORMS = frozenset(
    {"mastodon", "bluesky", "x", "linkedin", "threads", "facebook", "sandbox"}
)
# X also links bare domains ("example.com"); the others only http(s) addresses.
BARE_DOMAIN_PLATFORMS = frozenset({"x"})


@dataclass(frozen=True)
class LinkCard:
    url: str
    domain: str


@dataclass(frozen=True)
class PreviewMedia:
    url: str
    is_image: bool
    alt_text: str
    name: str
    is_left_out: bool  # past the platform's media limit: not sent


@dataclass
class PreviewPost:
    """One post of the preview (a thread has several)."""

    part: int  # the source part it comes from
    shown: str  # the text that fits
    cut: str  # what the limit cuts off ("" when it fits)
    media: list[PreviewMedia] = field(default_factory=list)
    link: LinkCard | None = None

    @property
    def is_cut(self) -> bool:
        return bool(self.cut)


@dataclass
class Preview:
    destination: DestinationDraft
    posts: list[PreviewPost]
    left_out_parts: int  # parts a platform without threads does not publish
    frame: tuple[int, int] | None
    limit: int | None

    @property
    def key(self) -> str:
        return self.destination.key

    @property
    def account(self) -> SocialAccount:
        return self.destination.account

    @property
    def name(self) -> str:
        return self.account.display_name or self.account.handle

    @property
    def initials(self) -> str:
        return initials(self.name)

    @property
    def is_thread(self) -> bool:
        return len(self.posts) > 1

    @property
    def needs_reconnect(self) -> bool:
        return self.account.status == SocialAccount.Status.NEEDS_RECONNECT

    @property
    def frame_css(self) -> str:
        return f"{self.frame[0]} / {self.frame[1]}" if self.frame else ""

    @property
    def frame_label(self) -> str:
        if not self.frame:
            return ""
        width, height = self.frame
        if (width, height) == (191, 100):
            return "1.91:1"
        return f"{width}:{height}"


def initials(name: str) -> str:
    """Up to two letters for an avatar: the first letters of the first two words."""
    words = [w for w in re.split(r"[\W_]+", name) if w]
    if not words:
        return "?"
    letters = [w[0] for w in words[:2]] if len(words) > 1 else list(words[0][:2])
    return "".join(letters).upper()


def cut_at_limit(text: str, counter: Counter | str, limit: int, *, url_length: int) -> int:
    """How many grapheme clusters of text fit within limit, counted the platform's way.

    A binary search on the prefix length: a count grows with its prefix (a link counts its
    fixed length only once complete, so the cut may land a few characters early inside a
    link, never after the limit).
    """
    clusters = graphemes(text)
    if count_text(text, counter, url_length=url_length) <= limit:
        return len(clusters)
    low, high = 0, len(clusters)  # low fits, high does not
    while high - low > 1:
        middle = (low + high) // 2
        if count_text("".join(clusters[:middle]), counter, url_length=url_length) <= limit:
            low = middle
        else:
            high = middle
    return low


def _link(text: str, platform: str) -> LinkCard | None:
    spans = find_urls(text, bare_domains=platform in BARE_DOMAIN_PLATFORMS)
    if not spans:
        return None
    start, end = spans[0]
    url = text[start:end]
    address = url if "://" in url else f"https://{url}"
    domain = (urlsplit(address).hostname or url).removeprefix("www.")
    return LinkCard(url=url, domain=domain)


def _media(
    workspace: Workspace, media: list[MediaDraft], destination: DestinationDraft
) -> list[PreviewMedia]:
    caps = destination.capabilities
    seen: dict[str, int] = {}
    result = []
    for item in media:
        asset = item.asset
        bucket = caps.media_bucket(asset.kind) if caps else asset.kind
        seen[bucket] = seen.get(bucket, 0) + 1
        most = caps.max_media_for(asset.kind) if caps else None
        accepted = caps is None or asset.kind in caps.accepts_media
        url = reverse("media-file", kwargs={"workspace_slug": workspace.slug, "pk": asset.pk})
        result.append(
            PreviewMedia(
                url=url,
                is_image=asset.kind in ("image", "gif"),
                alt_text=item.alt_text,
                name=asset.original_name or asset.kind,
                is_left_out=not accepted or (most is not None and seen[bucket] > most),
            )
        )
    return result


def preview_destination(
    workspace: Workspace, draft: Draft, destination: DestinationDraft
) -> Preview:
    caps = destination.capabilities
    platform = destination.account.platform
    limit = account_text_limit(destination.account) or (caps.text_limit if caps else None)
    parts = draft.parts(destination)
    threads = caps.supports_threads if caps else True
    shown_parts = parts if threads else parts[:1]
    posts = []
    for source, text, media in shown_parts:
        fit = len(text)
        if caps is not None and limit is not None:
            clusters = graphemes(text)
            kept = cut_at_limit(text, caps.text_counter, limit, url_length=caps.url_length)
            fit = len("".join(clusters[:kept]))
        preview_media = _media(workspace, media, destination)
        link = None
        if platform in LINK_CARD_PLATFORMS and not preview_media:
            link = _link(text, platform)
        posts.append(
            PreviewPost(
                part=source, shown=text[:fit], cut=text[fit:], media=preview_media, link=link
            )
        )
    return Preview(
        destination=destination,
        posts=posts,
        left_out_parts=len(parts) - len(shown_parts),
        frame=FEED_FRAMES.get(platform),
        limit=limit,
    )


def preview_draft(workspace: Workspace, draft: Draft) -> list[Preview]:
    """One preview per destination of the draft, in the draft's order."""
    return [preview_destination(workspace, draft, d) for d in draft.destinations]

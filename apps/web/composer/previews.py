"""How the post will look on each destination, while it is written: the account as the
network shows it (name, handle, initials), the text cut where the platform's limit cuts
it (counted the platform's way, the count shown), folded where that network's feed folds
a long text behind "see more", the parts as a thread where the platform threads them (a
platform without threads refuses more than one part), a link card for the first link, the
media in order, framed and laid out the way that network's feed shows them, and the first
comment where the platform takes one (a reply under the thread, or a comment).

Each network has a look (``STYLES``): a short-post timeline (X, Bluesky, Mastodon,
Threads), a feed with a fold (LinkedIn, Facebook), a picture first (Instagram, Pinterest),
a video frame (TikTok, YouTube), a forum post with its title (Reddit).

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
# The look of each network's post; a platform not listed looks like a short post.
STYLES: dict[str, str] = {
    "linkedin": "feed",
    "facebook": "feed",
    "instagram": "visual",
    "pinterest": "visual",
    "tiktok": "video",
    "youtube": "video",
    "reddit": "forum",
}
# Where a feed folds a long text behind a "see more": (characters, lines) shown before it
# at most, and its label. LinkedIn shows about three lines, Instagram's caption two.
FEED_FOLDS: dict[str, tuple[int, int, str]] = {
    "linkedin": (210, 3, "…see more"),
    "instagram": (125, 2, "… more"),
    "facebook": (477, 5, "… See more"),
}
# How several media are laid out: a carousel shows one at a time (swiped), a collage one
# large above the others; elsewhere a grid of up to four.
MEDIA_LAYOUTS: dict[str, str] = {
    "instagram": "carousel",
    "tiktok": "carousel",
    "linkedin": "collage",
    "facebook": "collage",
}
# The catalog's text units as the count under a preview names them.
UNIT_LABELS = {
    "grapheme": "characters",
    "char": "characters",
    "weighted": "weighted characters",
    "utf16": "UTF-16 units",
    "byte": "bytes",
}
# Settings a network shows as the post's title.
TITLE_SETTINGS = ("title",)


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
    count: int = 0  # the text counted the platform's way
    fold: int | None = None  # where in ``shown`` the feed folds it behind "see more"

    @property
    def is_cut(self) -> bool:
        return bool(self.cut)

    @property
    def before_fold(self) -> str:
        return self.shown if self.fold is None else self.shown[: self.fold]

    @property
    def after_fold(self) -> str:
        return "" if self.fold is None else self.shown[self.fold :]


@dataclass(frozen=True)
class FirstComment:
    """The first comment as the network shows it under the post."""

    text: str
    mode: str  # "reply": a reply under the thread; "comment": under the post
    count: int
    limit: int

    @property
    def is_over(self) -> bool:
        return self.count > self.limit


@dataclass
class Preview:
    destination: DestinationDraft
    posts: list[PreviewPost]
    left_out_parts: int  # parts past the first where the platform publishes no threads
    frame: tuple[int, int] | None
    limit: int | None
    unit: str = ""
    first_comment: FirstComment | None = None
    comment_not_taken: bool = False  # a first comment is written; this network takes none

    @property
    def platform(self) -> str:
        return self.account.platform

    @property
    def unit_label(self) -> str:
        return UNIT_LABELS.get(self.unit, self.unit)

    @property
    def style(self) -> str:
        return STYLES.get(self.platform, "short")

    @property
    def layout(self) -> str:
        return MEDIA_LAYOUTS.get(self.platform, "grid")

    @property
    def fold_label(self) -> str:
        return FEED_FOLDS[self.platform][2] if self.platform in FEED_FOLDS else ""

    @property
    def title(self) -> str:
        """The post's title where the network shows one (a setting)."""
        for name in TITLE_SETTINGS:
            value = self.destination.settings.get(name)
            if isinstance(value, str) and value.strip():
                return value.strip()
        return ""

    @property
    def community(self) -> str:
        value = self.destination.settings.get("subreddit")
        return value.strip().removeprefix("r/") if isinstance(value, str) else ""

    @property
    def content_warning(self) -> str:
        value = self.destination.settings.get("spoiler_text")
        return value.strip() if isinstance(value, str) else ""

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


def fold_at(text: str, platform: str) -> int | None:
    """Where the network's feed folds ``text`` behind its "see more" (an index into text),
    or None when it shows it whole: after its number of lines, or its number of
    characters (moved back to the last space, so a word is not split)."""
    if platform not in FEED_FOLDS:
        return None
    chars, lines, _label = FEED_FOLDS[platform]
    breaks = [i for i, ch in enumerate(text) if ch == "\n"]
    by_lines = breaks[lines - 1] if len(breaks) >= lines else None
    clusters = graphemes(text)
    by_chars = None
    if len(clusters) > chars:
        head = "".join(clusters[:chars])
        space = head.rstrip().rfind(" ")
        by_chars = space if space > chars // 2 else len(head)
    found = [at for at in (by_lines, by_chars) if at is not None]
    if not found:
        return None
    at = min(found)
    return at if text[at:].strip() else None


def _post(
    workspace: Workspace,
    destination: DestinationDraft,
    part: tuple[int, str, list[MediaDraft]],
    limit: int | None,
) -> PreviewPost:
    """One post: the text that fits (counted the platform's way), its fold, media, card."""
    caps = destination.capabilities
    platform = destination.account.platform
    source, text, media = part
    fit, count = len(text), len(graphemes(text))
    if caps is not None:
        count = count_text(text, caps.text_counter, url_length=caps.url_length)
        if limit is not None:
            kept = cut_at_limit(text, caps.text_counter, limit, url_length=caps.url_length)
            fit = len("".join(graphemes(text)[:kept]))
    shown = text[:fit]
    preview_media = _media(workspace, media, destination)
    link = None
    if platform in LINK_CARD_PLATFORMS and not preview_media:
        link = _link(text, platform)
    return PreviewPost(
        part=source,
        shown=shown,
        cut=text[fit:],
        media=preview_media,
        link=link,
        count=count,
        fold=fold_at(shown, platform),
    )


def _first_comment(draft: Draft, destination: DestinationDraft) -> tuple[FirstComment | None, bool]:
    """The first comment as this network shows it, and whether one is written that this
    network does not take (so it goes out without it)."""
    text = draft.first_comment.strip()
    if not text:
        return None, False
    caps = destination.capabilities
    if caps is None or not caps.supports_first_comment:
        return None, True
    count = count_text(text, caps.text_counter, url_length=caps.url_length)
    mode = caps.first_comment_mode or "comment"
    return FirstComment(text, mode, count, caps.first_comment_limit or 0), False


def preview_destination(
    workspace: Workspace, draft: Draft, destination: DestinationDraft
) -> Preview:
    """The destination's posts as its network will show them: a thread where the platform
    threads the parts, else the first part (more parts are refused there)."""
    caps = destination.capabilities
    limit = account_text_limit(destination.account) or (caps.text_limit if caps else None)
    parts = draft.parts(destination)
    threads = caps.supports_threads if caps else True
    shown_parts = parts if threads else parts[:1]
    comment, not_taken = _first_comment(draft, destination)
    return Preview(
        destination=destination,
        posts=[_post(workspace, destination, part, limit) for part in shown_parts],
        left_out_parts=len(parts) - len(shown_parts),
        frame=FEED_FRAMES.get(destination.account.platform),
        limit=limit,
        unit=caps.text_unit if caps else "",
        first_comment=comment,
        comment_not_taken=not_taken,
    )


def preview_draft(workspace: Workspace, draft: Draft) -> list[Preview]:
    """One preview per destination of the draft, in the draft's order."""
    return [preview_destination(workspace, draft, d) for d in draft.destinations]

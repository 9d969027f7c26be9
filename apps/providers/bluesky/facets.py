"""Rich-text facets for a Bluesky post.

Bluesky detects nothing in post text: links, mentions and hashtags are clickable only when
the record carries facets pointing at them by UTF-8 *byte* offsets (start inclusive, end
exclusive). Facets must be sorted and must not overlap, so a `#fragment` inside a URL or an
`@name` inside a path is not a second facet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import regex

_URL = regex.compile(r"(?<![\w/@.])https?://[^\s<>\"'`]+", regex.IGNORECASE)
_MENTION = regex.compile(
    r"(?<![\w@.])@((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?)",
    regex.IGNORECASE,
)
# A tag starts after whitespace or at the start; it stops at whitespace and invisible joiners.
_INVISIBLE = "\u00ad\u2060\u200a\u200b\u200c\u200d\u20e2"
_TAG = regex.compile(rf"(?:^|(?<=\s))[#\uff03]([^\s{_INVISIBLE}]+)")
_TRAILING_PUNCT = regex.compile(r"\p{P}+$")
TAG_MAX_LEN = 64


@dataclass(frozen=True)
class _Span:
    start: int  # character offsets into the text
    end: int
    kind: str  # link, mention, tag
    value: str


def _links(text: str) -> list[_Span]:
    spans = []
    for match in _URL.finditer(text):
        url = match.group(0)
        # Sentence punctuation after a URL is not part of it; nor is an unbalanced ")".
        while url and (url[-1] in ".,;:!?" or (url[-1] == ")" and url.count("(") < url.count(")"))):
            url = url[:-1]
        spans.append(_Span(match.start(), match.start() + len(url), "link", url))
    return spans


def _mentions(text: str) -> list[_Span]:
    return [
        _Span(m.start(), m.end(), "mention", m.group(1).lower()) for m in _MENTION.finditer(text)
    ]


def _tags(text: str) -> list[_Span]:
    spans = []
    for match in _TAG.finditer(text):
        tag = _TRAILING_PUNCT.sub("", match.group(1))
        if not tag or tag.isdigit() or len(tag) > TAG_MAX_LEN:
            continue
        start = match.start()
        spans.append(_Span(start, start + 1 + len(tag), "tag", tag))
    return spans


def _non_overlapping(spans: list[_Span]) -> list[_Span]:
    """Keep spans in priority order (links, then mentions, then tags), dropping any that
    overlaps one already kept; return them sorted by position."""
    kept: list[_Span] = []
    for span in spans:
        if all(span.end <= other.start or span.start >= other.end for other in kept):
            kept.append(span)
    return sorted(kept, key=lambda s: s.start)


def mention_handles(text: str) -> list[str]:
    """Handles mentioned in the text, to resolve to DIDs before building facets."""
    return sorted(
        {
            span.value
            for span in _non_overlapping(_links(text) + _mentions(text))
            if span.kind == "mention"
        }
    )


def build_facets(text: str, dids: Callable[[str], str | None] | dict[str, str]) -> list[dict]:
    """The `facets` array for `text`. `dids` maps a handle to its DID; a mention whose
    handle did not resolve stays plain text."""
    lookup = dids.get if isinstance(dids, dict) else dids
    facets = []
    for span in _non_overlapping(_links(text) + _mentions(text) + _tags(text)):
        if span.kind == "link":
            feature = {"$type": "app.bsky.richtext.facet#link", "uri": span.value}
        elif span.kind == "mention":
            did = lookup(span.value)
            if not did:
                continue
            feature = {"$type": "app.bsky.richtext.facet#mention", "did": did}
        else:
            feature = {"$type": "app.bsky.richtext.facet#tag", "tag": span.value}
        facets.append(
            {
                "index": {
                    "byteStart": len(text[: span.start].encode("utf-8")),
                    "byteEnd": len(text[: span.end].encode("utf-8")),
                },
                "features": [feature],
            }
        )
    return facets


def first_link(text: str) -> str | None:
    links = _links(text)
    return links[0].value if links else None

"""Text length as each platform counts it.

Platforms disagree on what a "character" is, so the catalog names a counter per platform:

- ``graphemes``: user-perceived characters (Unicode extended grapheme clusters, UAX #29, via
  the ``regex`` module's ``\\X``). A family emoji joined by ZWJ, a flag, a letter with
  combining accents and a Devanagari conjunct each count 1. (Bluesky, the sandbox.)
- ``mastodon``: graphemes, after every http(s) URL is replaced by a fixed-length placeholder
  (23 by default, whatever the URL's own length) and every ``@user@domain`` mention by
  ``@user``, the way Mastodon's status length validator counts.
- ``x_weighted``: twitter-text v3 weighting on NFC text: code points in the Latin and
  general-punctuation ranges weigh 1, everything else (CJK, Hangul...) weighs 2, an emoji
  sequence (ZWJ sequences and skin tones included) weighs 2 as a whole, and every URL
  (with or without a scheme) weighs 23.
- ``threads``: code points, except that an emoji counts its UTF-8 byte length.
- ``code_points``: Unicode code points, as sent (LinkedIn, Instagram, Facebook, Pinterest,
  Reddit).
- ``utf16``: UTF-16 code units (TikTok); an astral-plane emoji counts 2.
- ``utf8_bytes``: UTF-8 bytes (YouTube's description, Bluesky's byte ceiling).

URL detection is a close approximation of the platforms' own extractors: a URL with an
http(s) scheme always counts; X also counts a bare domain ending in a known or two-letter
top-level domain ("example.com", "bit.ly/abc", "www.foo.jp"), and never one glued to an
``@`` (e-mail addresses) or to a word. As in twitter-text, a bare one-label name under a
country-code TLD with no path ("file.py", "it.so") is not a link, except under ``.co`` and
``.tv`` ("t.co", "twitch.tv").
"""

from __future__ import annotations

import unicodedata
from enum import StrEnum

import regex


class Counter(StrEnum):
    GRAPHEMES = "graphemes"
    MASTODON = "mastodon"
    X_WEIGHTED = "x_weighted"
    THREADS = "threads"
    CODE_POINTS = "code_points"
    UTF16 = "utf16"
    UTF8_BYTES = "utf8_bytes"


DEFAULT_URL_LENGTH = 23

_GRAPHEME = regex.compile(r"\X")

# An emoji presentation sequence: anything drawn as an emoji by default, a text-default
# pictograph followed by VS16 (U+FE0F), or a keycap (digit + optional VS16 + U+20E3).
_EMOJI = regex.compile(r"\p{Emoji_Presentation}|\p{Emoji}\uFE0F|[0-9#*]\uFE0F?\u20E3")

# Common generic TLDs; two-letter country codes are matched by shape. twitter-text ships
# the full IANA list; a bare domain under a rarer gTLD is counted by its own length.
_GTLDS = (
    "aero|agency|ai|app|art|asia|biz|blog|cafe|cat|center|chat|city|cloud|club|codes|com|"
    "community|company|coop|design|dev|digital|edu|email|events|finance|fyi|games|global|"
    "gov|group|guru|health|host|inc|info|int|jobs|life|link|live|ltd|media|mil|mobi|museum|"
    "name|net|network|news|one|online|org|page|photo|photos|pro|run|science|shop|site|"
    "social|software|solutions|space|store|studio|systems|team|tech|tel|today|tools|top|"
    "travel|tv|video|vip|website|wiki|work|works|world|xyz|zone"
)
_URL_TAIL = r"""(?:[/?#][^\s<>"]*)?"""
# Scheme URLs: not glued to a preceding word character, slash, dot or @.
_SCHEME_URL = regex.compile(
    r"(?<![\w/.@$#])https?://[\w-]+(?:\.[\w-]+)+(?::\d{1,5})?" + _URL_TAIL, regex.IGNORECASE
)
_BARE_DOMAIN_URL = regex.compile(
    r"(?<![\w/.@$#\-:])(?P<domain>(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+"
    rf"(?:{_GTLDS}|[a-z]{{2}}))(?![\w-])(?::\d{{1,5}})?" + _URL_TAIL,
    regex.IGNORECASE,
)
# twitter-text's invalidShortDomain / validSpecialShortDomain: "name.cc" without a path is
# not a link, unless the country code is one of these.
_SHORT_DOMAIN = regex.compile(r"[a-z0-9-]+\.[a-z]{2}", regex.IGNORECASE)
_SPECIAL_SHORT_CCTLDS = ("co", "tv")
# Trailing punctuation is sentence punctuation, not part of the URL.
_TRAILING_PUNCT = ".,:;!?'\")]}"

# Mastodon's remote mention: @user@domain is counted as @user.
_MASTODON_REMOTE_MENTION = regex.compile(
    r"(?<![\w/@])@([a-z0-9_]+(?:[a-z0-9_.-]+[a-z0-9_]+)?)@[a-z0-9.\-]+[a-z0-9]+",
    regex.IGNORECASE,
)

# twitter-text v3: code point ranges weighing 1 (scaled: 100); everything else weighs 2.
_X_LIGHT_RANGES = ((0x0000, 0x10FF), (0x2000, 0x200D), (0x2010, 0x201F), (0x2032, 0x2037))


def graphemes(text: str) -> list[str]:
    """Split text into extended grapheme clusters."""
    return _GRAPHEME.findall(text)


def is_emoji(cluster: str) -> bool:
    """True when a grapheme cluster is drawn as an emoji (ZWJ sequences, flags, keycaps,
    skin-tone modified emoji, VS16 presentation)."""
    return _EMOJI.search(cluster) is not None


def _trim(url: str) -> str:
    while url and url[-1] in _TRAILING_PUNCT:
        # Keep a closing parenthesis that balances one inside the URL (Wikipedia links).
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    return url


def find_urls(text: str, *, bare_domains: bool = False) -> list[tuple[int, int]]:
    """(start, end) spans of the URLs in text, in order and not overlapping."""
    spans: list[tuple[int, int]] = []
    for match in _SCHEME_URL.finditer(text):
        url = _trim(match.group())
        spans.append((match.start(), match.start() + len(url)))
    if bare_domains:
        for match in _BARE_DOMAIN_URL.finditer(text):
            start = match.start()
            if any(s <= start < e for s, e in spans):
                continue
            url = _trim(match.group())
            if _is_short_domain_without_path(match.group("domain"), url):
                continue
            spans.append((start, start + len(url)))
        spans.sort()
    return spans


def _is_short_domain_without_path(domain: str, url: str) -> bool:
    rest = url[len(domain) :].lstrip(":0123456789")  # a port is not a path
    return (
        not rest.startswith("/")
        and _SHORT_DOMAIN.fullmatch(domain) is not None
        and domain.rsplit(".", 1)[1].lower() not in _SPECIAL_SHORT_CCTLDS
    )


def _replace_spans(text: str, spans: list[tuple[int, int]], placeholder: str) -> str:
    out, last = [], 0
    for start, end in spans:
        out.append(text[last:start])
        out.append(placeholder)
        last = end
    out.append(text[last:])
    return "".join(out)


def count_graphemes(text: str) -> int:
    return len(graphemes(text))


def count_code_points(text: str) -> int:
    return len(text)


def count_utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def count_utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def count_mastodon(text: str, *, url_length: int = DEFAULT_URL_LENGTH) -> int:
    """Graphemes with each URL counted as url_length and @user@domain as @user."""
    # "x" is one grapheme and cannot merge with its neighbours, so the placeholder counts
    # exactly url_length.
    countable = _replace_spans(text, find_urls(text), "x" * url_length)
    countable = _MASTODON_REMOTE_MENTION.sub(r"@\1", countable)
    return count_graphemes(countable)


def _x_code_point_weight(char: str) -> int:
    cp = ord(char)
    return 1 if any(lo <= cp <= hi for lo, hi in _X_LIGHT_RANGES) else 2


def count_x_weighted(text: str, *, url_length: int = DEFAULT_URL_LENGTH) -> int:
    """X's weighted length (twitter-text v3)."""
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n"))
    total = 0
    last = 0
    for start, end in find_urls(text, bare_domains=True):
        total += _x_plain_weight(text[last:start]) + url_length
        last = end
    return total + _x_plain_weight(text[last:])


def _x_plain_weight(text: str) -> int:
    # An emoji sequence weighs 2 as a whole; other clusters weigh per code point, so a
    # letter with a combining accent that NFC could not compose weighs 2.
    return sum(
        2 if is_emoji(cluster) else sum(_x_code_point_weight(c) for c in cluster)
        for cluster in graphemes(text)
    )


def count_threads(text: str) -> int:
    """Code points, with each emoji counted as its UTF-8 byte length."""
    return sum(
        count_utf8_bytes(cluster) if is_emoji(cluster) else len(cluster)
        for cluster in graphemes(text)
    )


def count_text(text: str, counter: Counter | str, *, url_length: int | None = None) -> int:
    """Length of text under the named counter."""
    counter = Counter(counter)
    url_length = DEFAULT_URL_LENGTH if url_length is None else url_length
    if counter is Counter.GRAPHEMES:
        return count_graphemes(text)
    if counter is Counter.MASTODON:
        return count_mastodon(text, url_length=url_length)
    if counter is Counter.X_WEIGHTED:
        return count_x_weighted(text, url_length=url_length)
    if counter is Counter.THREADS:
        return count_threads(text)
    if counter is Counter.CODE_POINTS:
        return count_code_points(text)
    if counter is Counter.UTF16:
        return count_utf16_units(text)
    return count_utf8_bytes(text)

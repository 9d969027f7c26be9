import pytest

from apps.providers.text_counting import (
    Counter,
    count_graphemes,
    count_mastodon,
    count_text,
    count_threads,
    count_x_weighted,
    find_urls,
    is_emoji,
)

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # man, woman, girl joined by ZWJ
RAINBOW_FLAG = "\U0001f3f3\ufe0f\u200d\U0001f308"
POLISH_FLAG = "\U0001f1f5\U0001f1f1"
THUMBS_UP_DARK = "\U0001f44d\U0001f3fd"
KEYCAP_ONE = "1\ufe0f\u20e3"
E_ACUTE_DECOMPOSED = "e\u0301"
DEVANAGARI_KSHI = "\u0915\u094d\u0937\u093f"  # a conjunct: one grapheme
HANGUL = "\ud55c\uad6d\uc5b4"  # three syllables


@pytest.mark.parametrize(
    "text, expected",
    [
        ("hello", 5),
        (FAMILY, 1),
        (RAINBOW_FLAG, 1),
        (POLISH_FLAG, 1),
        (POLISH_FLAG * 2, 2),
        (THUMBS_UP_DARK, 1),
        (KEYCAP_ONE, 1),
        (E_ACUTE_DECOMPOSED, 1),
        ("Z\u0351\u036b\u0343\u036a\u0302\u036b", 1),  # a letter under many combining marks
        (DEVANAGARI_KSHI, 1),
        ("\r\n", 1),
        ("", 0),
    ],
)
def test_graphemes(text, expected):
    assert count_graphemes(text) == expected


@pytest.mark.parametrize(
    "cluster, expected",
    [
        (FAMILY, True),
        (POLISH_FLAG, True),
        (KEYCAP_ONE, True),
        (THUMBS_UP_DARK, True),
        ("\u00a9", False),  # text presentation by default
        ("\u00a9\ufe0f", True),
        ("a", False),
        ("\u65e5", False),
    ],
)
def test_emoji_detection(cluster, expected):
    assert is_emoji(cluster) is expected


class TestMastodon:
    def test_every_url_counts_23_whatever_its_length(self):
        assert count_mastodon("see https://a.io") == 4 + 23
        assert count_mastodon("https://example.com/" + "x" * 200) == 23

    def test_a_remote_mention_counts_as_the_local_part(self):
        assert count_mastodon("@alice@mastodon.social hi") == len("@alice hi")
        assert count_mastodon("@alice hi") == len("@alice hi")

    def test_an_email_address_is_not_a_mention_or_url(self):
        assert count_mastodon("mail alice@example.com") == len("mail alice@example.com")

    def test_emoji_are_graphemes(self):
        assert count_mastodon(f"{FAMILY} {POLISH_FLAG}") == 3


class TestX:
    """Examples worked out with twitter-text v3's rules."""

    @pytest.mark.parametrize(
        "text, expected",
        [
            ("english text \u65e5\u672c\u8a9e \U0001f637 https://example.com", 46),
            ("a" * 280, 280),
            ("\u65e5" * 140, 280),  # CJK weighs 2
            (HANGUL, 6),
            (FAMILY, 2),  # a ZWJ sequence weighs 2 as a whole
            (RAINBOW_FLAG + POLISH_FLAG, 4),
            (THUMBS_UP_DARK, 2),
            (KEYCAP_ONE, 2),
            ("\u00a9", 1),  # Latin-1, not an emoji presentation
            (E_ACUTE_DECOMPOSED, 1),  # NFC composes it first
            ("caf\u00e9", 4),
            ("\u2014\u2019", 2),  # em dash and curly quote are in the light ranges
            ("\u2026", 2),  # the ellipsis is not
            ("\u20ac", 2),  # nor is the euro sign
            (DEVANAGARI_KSHI, 4),  # four code points below U+1100
            ("example.com", 23),  # bare domains are links on X
            # twitter-text: a bare one-label ccTLD name without a path is not a link...
            ("see file.py now", 15),
            ("it.so foo.jp", 12),
            # ...but with a path, a subdomain, a second-level name or under .co/.tv it is.
            ("bit.ly/abcde", 23),
            ("www.foo.jp", 23),
            ("foo.co.jp", 23),
            ("vine.co twitch.tv", 23 + 1 + 23),
            ("foo.jp:8080", 11),  # a port is not a path
            ("a@example.com", 13),  # an e-mail address is not a link
            ("https://example.com/path?q=1.", 24),  # sentence punctuation stays out
            ("(https://en.wikipedia.org/wiki/Foo_(bar))", 25),
        ],
    )
    def test_weighted_length(self, text, expected):
        assert count_x_weighted(text) == expected

    def test_the_url_weight_comes_from_the_catalog(self):
        assert count_text("https://example.com", Counter.X_WEIGHTED, url_length=30) == 30


class TestThreads:
    def test_emoji_count_their_utf8_bytes(self):
        assert count_threads("hi \U0001f600") == 3 + 4
        assert count_threads(FAMILY) == 18
        assert count_threads(POLISH_FLAG) == 8

    def test_other_characters_count_one(self):
        assert count_threads("\u65e5\u672c " + E_ACUTE_DECOMPOSED) == 5


@pytest.mark.parametrize(
    "counter, text, expected",
    [
        (Counter.CODE_POINTS, FAMILY, 5),
        (Counter.CODE_POINTS, E_ACUTE_DECOMPOSED, 2),
        (Counter.UTF16, "\U0001f600", 2),
        (Counter.UTF16, "abc", 3),
        (Counter.UTF8_BYTES, "\u00e9", 2),
        (Counter.UTF8_BYTES, "\U0001f600", 4),
        (Counter.GRAPHEMES, FAMILY + "a", 2),
    ],
)
def test_simple_counters(counter, text, expected):
    assert count_text(text, counter) == expected


def test_url_spans():
    text = "a https://x.com/a, b www.example.org and c.io."

    assert [text[s:e] for s, e in find_urls(text)] == ["https://x.com/a"]
    assert [text[s:e] for s, e in find_urls(text, bare_domains=True)] == [
        "https://x.com/a",
        "www.example.org",
    ]


def test_url_spans_follow_twitter_texts_short_domain_conformance_cases():
    # twitter-text conformance/extract.yml, "urls" section.
    cases = [
        ("twitter.jp日本語it.so中国語foo.jp it.so foo.jp", []),
        ("MLB.tv vine.co twitch.tv t.co", ["MLB.tv", "vine.co", "twitch.tv", "t.co"]),
        ("t.co/abcde bit.ly/abcde", ["t.co/abcde", "bit.ly/abcde"]),
        (
            "foo.com foo.net foo.org foo.edu foo.gov",
            ["foo.com", "foo.net", "foo.org", "foo.edu", "foo.gov"],
        ),
        ("foo.co.jp www.foo.co.uk foo.jp", ["foo.co.jp", "www.foo.co.uk"]),
    ]
    for text, expected in cases:
        spans = find_urls(text, bare_domains=True)
        assert [text[s:e] for s, e in spans] == expected, text

import pytest

from apps.providers.catalog import SETTING_TYPES, all_capabilities
from apps.providers.validation import MediaInfo, Problem, validate_rendition

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
E_ACUTE_DECOMPOSED = "e\u0301"

IMAGE = MediaInfo(kind="image", mime_type="image/jpeg", size_bytes=100_000)
PNG = MediaInfo(kind="image", mime_type="image/png", size_bytes=100_000)
VIDEO = MediaInfo(kind="video", mime_type="video/mp4", size_bytes=1_000_000, duration_s=30)
GIF = MediaInfo(kind="gif", mime_type="image/gif", size_bytes=100_000)

# Settings each platform requires, so text and media tests see only their own problems.
REQUIRED = {
    "youtube": {"title": "A title"},
    "reddit": {"subreddit": "python", "title": "A title"},
    "pinterest": {"board_id": "123"},
    "tiktok": {"privacy_level": "SELF_ONLY"},
}
# Platforms that refuse a post without media get one they accept.
MEDIA_NEEDED = {"instagram": [IMAGE], "pinterest": [IMAGE], "tiktok": [VIDEO], "youtube": [VIDEO]}


def check(platform, segments, media=None, settings=None, **kwargs):
    if media is None:
        media = [MEDIA_NEEDED.get(platform, [])]
    if settings is None:
        settings = REQUIRED.get(platform, {})
    return validate_rendition(platform, segments, settings, media, **kwargs)


def codes(problems):
    return [(p.path, p.code) for p in problems]


# One unit of each platform's counter, and the limit.
UNITS = [
    ("sandbox", "a", 500),
    ("mastodon", "a", 500),
    ("bluesky", "a", 300),
    ("linkedin", "a", 3000),
    ("x", "a", 280),
    ("threads", "a", 500),
    ("instagram", "a", 2200),
    ("facebook", "a", 63206),
    ("tiktok", "a", 2200),
    ("youtube", "a", 5000),
    ("pinterest", "a", 800),
    ("reddit", "a", 40000),
]


@pytest.mark.parametrize("platform, unit, limit", UNITS)
def test_text_at_the_limit_passes_and_one_more_fails(platform, unit, limit):
    assert check(platform, [unit * limit]) == []

    (problem,) = check(platform, [unit * (limit + 1)])
    assert (problem.path, problem.code) == ("segments.0.text", "TEXT_TOO_LONG")
    assert (problem.limit, problem.actual) == (limit, limit + 1)


@pytest.mark.parametrize(
    "platform, text, fits",
    [
        # Grapheme platforms count a ZWJ family as one character...
        ("bluesky", "\U0001f600" * 300, True),
        ("bluesky", FAMILY * 166, True),  # 166 graphemes, 2988 bytes
        ("mastodon", FAMILY * 500, True),
        ("sandbox", E_ACUTE_DECOMPOSED * 500, True),
        # ...X weighs it 2...
        ("x", FAMILY * 140, True),
        ("x", FAMILY * 141, False),
        # ...Threads counts its UTF-8 bytes (18 each)...
        ("threads", FAMILY * 27, True),
        ("threads", FAMILY * 28, False),
        # ...code-point platforms count its 5 code points...
        ("linkedin", FAMILY * 600, True),
        ("linkedin", FAMILY * 601, False),
        ("linkedin", E_ACUTE_DECOMPOSED * 1500, True),
        ("linkedin", E_ACUTE_DECOMPOSED * 1501, False),
        # ...TikTok its 8 UTF-16 units, YouTube its 18 bytes.
        ("tiktok", FAMILY * 275, True),
        ("tiktok", FAMILY * 276, False),
        ("youtube", FAMILY * 277, True),
        ("youtube", FAMILY * 278, False),
        # CJK on X weighs 2.
        ("x", "\u65e5\u672c" * 70, True),
        ("x", "\u65e5\u672c" * 70 + "a", False),
        # URLs: 23 on X and Mastodon whatever their length.
        ("x", "a" * 256 + " https://example.com/" + "p" * 100, True),
        ("x", "a" * 258 + " example.com", False),
        ("mastodon", "a" * 476 + " https://example.com/" + "p" * 300, True),
        ("mastodon", "a" * 477 + " https://e.io", False),
        # Mastodon counts @user@domain as @user.
        ("mastodon", "a" * 493 + " @alice@mastodon.social", True),
        ("mastodon", "a" * 494 + " @alice@mastodon.social", False),
    ],
)
def test_text_is_counted_as_each_platform_counts(platform, text, fits):
    problems = check(platform, [text])

    assert (problems == []) is fits, problems


def test_bluesky_also_limits_bytes():
    assert check("bluesky", ["\U0001f600" * 300]) == []  # 300 graphemes, 1200 bytes
    # 250 family emoji: 250 graphemes but 4500 bytes.
    (problem,) = check("bluesky", [FAMILY * 250])
    assert (problem.code, problem.limit, problem.actual) == ("TEXT_TOO_LONG", 3000, 4500)
    assert "bytes" in problem.message


def test_mastodon_counts_the_content_warning_with_the_text():
    assert check("mastodon", ["a" * 490], settings={"spoiler_text": "b" * 10}) == []

    (problem,) = check("mastodon", ["a" * 490], settings={"spoiler_text": "b" * 11})
    assert problem.code == "TEXT_TOO_LONG"
    assert "content warning" in problem.message


def test_a_per_account_text_limit_replaces_the_catalogs():
    assert codes(check("sandbox", ["a" * 101], text_limit=100)) == [
        ("segments.0.text", "TEXT_TOO_LONG")
    ]
    assert check("x", ["a" * 25_000], text_limit=25_000) == []


@pytest.mark.parametrize("platform", ["linkedin", "instagram", "facebook", "tiktok", "youtube"])
def test_threads_are_refused_where_unsupported(platform):
    problems = check(platform, ["one", "two"], media=[MEDIA_NEEDED.get(platform, []), []])

    assert ("segments", "THREADS_UNSUPPORTED") in codes(problems)


@pytest.mark.parametrize("platform", ["mastodon", "bluesky", "x", "threads", "sandbox"])
def test_threads_pass_where_supported(platform):
    assert check(platform, ["one", "two", "three"]) == []


@pytest.mark.parametrize(
    "platform, media, expected",
    [
        ("x", [IMAGE] * 4, []),
        ("x", [IMAGE] * 5, [("segments.0.media", "TOO_MANY_MEDIA")]),
        ("x", [IMAGE, VIDEO], [("segments.0.media", "MEDIA_MIXED_UNSUPPORTED")]),
        ("x", [GIF, GIF], [("segments.0.media", "TOO_MANY_MEDIA")]),
        ("x", [GIF, IMAGE], [("segments.0.media", "MEDIA_MIXED_UNSUPPORTED")]),
        ("mastodon", [GIF, VIDEO], [("segments.0.media", "TOO_MANY_MEDIA")]),  # gifv is video
        ("bluesky", [GIF, VIDEO], [("segments.0.media", "TOO_MANY_MEDIA")]),  # GIFs go as video
        ("threads", [GIF], [("segments.0.media.0", "MEDIA_KIND_UNSUPPORTED")]),
        ("bluesky", [VIDEO, VIDEO], [("segments.0.media", "TOO_MANY_MEDIA")]),
        ("linkedin", [IMAGE] * 20, []),
        ("linkedin", [GIF, IMAGE], []),  # a GIF is an image there
        ("instagram", [IMAGE, VIDEO] * 5, []),  # carousels mix
        ("instagram", [PNG], [("segments.0.media.0", "MEDIA_FORMAT_UNSUPPORTED")]),
        (
            "youtube",
            [IMAGE],
            [
                ("segments.0.media.0", "MEDIA_KIND_UNSUPPORTED"),
                ("segments.0.media", "MEDIA_REQUIRED"),
            ],
        ),
        ("threads", [IMAGE, VIDEO], []),
    ],
)
def test_media_rules(platform, media, expected):
    problems = check(platform, ["text"], media=[media])

    assert sorted(codes(problems)) == sorted(expected)


def test_media_size_and_duration_limits():
    big_image = MediaInfo(kind="image", mime_type="image/jpeg", size_bytes=5_242_881)
    long_video = MediaInfo(kind="video", mime_type="video/mp4", size_bytes=10, duration_s=141)
    big_gif = MediaInfo(kind="gif", mime_type="image/gif", size_bytes=15_728_641)

    problems = check("x", ["t"], media=[[big_image], [long_video], [big_gif]] + [[]]) + check(
        "x", ["t"], media=[[long_video]]
    )

    found = {(p.code, p.limit, p.actual) for p in problems}
    assert ("MEDIA_TOO_LARGE", 5_242_880, 5_242_881) in found
    assert ("MEDIA_DURATION_OUT_OF_RANGE", 140.0, 141) in found


def test_a_bluesky_image_over_its_size_limit():
    (problem,) = check("bluesky", ["t"], media=[[MediaInfo("image", "image/png", 2_000_001)]])

    assert (problem.code, problem.limit) == ("MEDIA_TOO_LARGE", 2_000_000)


def test_alt_text_limits():
    long_alt = MediaInfo(kind="image", mime_type="image/jpeg", alt_text="a" * 1001)

    (problem,) = check("x", ["t"], media=[[long_alt]])

    assert (problem.path, problem.code, problem.limit, problem.actual) == (
        "segments.0.media.0.alt_text",
        "ALT_TEXT_TOO_LONG",
        1000,
        1001,
    )
    assert check("mastodon", ["t"], media=[[long_alt]]) == []  # 1500 there


def test_required_and_constrained_settings():
    problems = validate_rendition(
        "youtube", ["description"], {"title": "x" * 101, "privacy_status": "secret"}, [[VIDEO]]
    )
    problems += validate_rendition("reddit", ["body"], {}, [])
    problems += validate_rendition("tiktok", [""], {"privacy_level": "EVERYONE"}, [[VIDEO]])

    assert codes(problems) == [
        ("settings.title", "SETTING_TOO_LONG"),
        ("settings.privacy_status", "SETTING_INVALID"),
        ("settings.subreddit", "SETTING_REQUIRED"),
        ("settings.title", "SETTING_REQUIRED"),
        ("settings.privacy_level", "SETTING_INVALID"),
    ]


def test_youtube_refuses_angle_brackets_in_text_and_title():
    problems = validate_rendition("youtube", ["a <b>"], {"title": "x > y"}, [[VIDEO]])

    assert codes(problems) == [
        ("segments.0.text", "TEXT_FORBIDDEN_CHARACTERS"),
        ("settings.title", "TEXT_FORBIDDEN_CHARACTERS"),
    ]


def test_threads_allows_five_links():
    links = " ".join(f"https://example.com/{i}" for i in range(5))

    assert check("threads", [links]) == []
    assert codes(check("threads", [links + " https://example.com/6"])) == [
        ("segments.0.text", "TOO_MANY_LINKS")
    ]


def test_instagram_hashtag_and_mention_limits():
    text = " ".join(f"#tag{i}" for i in range(31)) + " " + " ".join(f"@u{i}" for i in range(21))

    assert codes(check("instagram", [text])) == [
        ("segments.0.text", "TOO_MANY_HASHTAGS"),
        ("segments.0.text", "TOO_MANY_MENTIONS"),
    ]


def test_every_problem_is_returned_not_just_the_first():
    problems = validate_rendition(
        "x",
        ["a" * 281, "", "ok"],
        {},
        [[IMAGE] * 5, [], [MediaInfo("image", "image/png", alt_text="a" * 1001)]],
    )

    assert codes(problems) == [
        ("segments.0.text", "TEXT_TOO_LONG"),
        ("segments.0.media", "TOO_MANY_MEDIA"),
        ("segments.1.text", "TEXT_REQUIRED"),
        ("segments.2.media.0.alt_text", "ALT_TEXT_TOO_LONG"),
    ]
    assert all(isinstance(p, Problem) and p.message for p in problems)


def test_an_unknown_platform_and_bad_settings_are_problems_not_exceptions():
    assert codes(validate_rendition("myspace", ["hi"])) == [("platform", "PLATFORM_UNKNOWN")]
    assert codes(validate_rendition("x", ["hi"], ["not", "a", "dict"])) == [
        ("settings", "SETTINGS_INVALID")
    ]
    assert codes(validate_rendition("x", [])) == [("segments", "SEGMENTS_REQUIRED")]


def test_problems_can_be_placed_under_a_destination():
    problem = Problem("segments.0.text", "TEXT_TOO_LONG", "too long", 280, 300)

    assert problem.prefixed("destinations.2").as_dict() == {
        "path": "destinations.2.segments.0.text",
        "code": "TEXT_TOO_LONG",
        "message": "too long",
        "limit": 280,
        "actual": 300,
    }


COVER_TIME_WHOLE = "cover_key_frame_time must be a whole number."


@pytest.mark.parametrize(
    "platform, given, message",
    [
        ("youtube", {"made_for_kids": "false"}, "made_for_kids must be true or false."),
        ("youtube", {"notify_subscribers": 0}, "notify_subscribers must be true or false."),
        ("reddit", {"nsfw": "true"}, "nsfw must be true or false."),
        ("tiktok", {"brand_content_toggle": "no"}, "brand_content_toggle must be true or false."),
        ("mastodon", {"sensitive": "yes"}, "sensitive must be true or false."),
        ("pinterest", {"cover_key_frame_time": "3"}, COVER_TIME_WHOLE),
        ("pinterest", {"cover_key_frame_time": True}, COVER_TIME_WHOLE),
        ("youtube", {"tags": "a,b"}, "tags must be a list of text values."),
        ("bluesky", {"langs": ["en", 3]}, "langs must be a list of text values."),
        ("youtube", {"title": 42}, "title must be text."),
    ],
)
def test_a_setting_of_the_wrong_type_is_refused(platform, given, message):
    problems = check(platform, ["text"], settings={**REQUIRED.get(platform, {}), **given})

    (name,) = given
    assert [(p.path, p.code, p.message) for p in problems] == [
        (f"settings.{name}", "SETTING_INVALID", message)
    ]


def test_settings_of_the_right_type_pass():
    settings = {
        "title": "A title",
        "made_for_kids": False,
        "notify_subscribers": True,
        "tags": ["a", "b"],
        "categoryId": "22",
    }

    assert check("youtube", ["text"], settings=settings) == []
    assert check("pinterest", ["t"], settings={"board_id": "1", "cover_key_frame_time": 3}) == []


def test_every_catalog_setting_has_a_known_type():
    for caps in all_capabilities().values():
        for spec in caps.settings:
            assert spec.type in SETTING_TYPES, (caps.platform, spec.name)

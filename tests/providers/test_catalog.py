import json
from pathlib import Path

import pytest

from apps.providers.catalog import (
    CATALOG_PATH,
    Readiness,
    UnknownPlatform,
    all_capabilities,
    get_capabilities,
)
from apps.providers.text_counting import Counter

SEED = Path(__file__).resolve().parents[3] / "shared" / "reference" / "capabilities.json"
PLATFORMS = [
    "mastodon",
    "bluesky",
    "linkedin",
    "x",
    "threads",
    "instagram",
    "facebook",
    "tiktok",
    "youtube",
    "pinterest",
    "reddit",
]


def test_every_platform_and_the_sandbox_are_catalogued():
    assert list(all_capabilities()) == [*PLATFORMS, "sandbox"]


@pytest.mark.skipif(not SEED.exists(), reason="the research seed is not beside the checkout")
def test_the_seed_values_are_kept_as_they_are():
    seed = json.loads(SEED.read_text())["platforms"]
    document = json.loads(CATALOG_PATH.read_text())
    ours, departures = document["platforms"], document["departures_from_seed"]
    for platform, values in seed.items():
        for key, value in values.items():
            if f"{platform}.{key}" in departures:
                assert ours[platform][key] != value, f"{platform}.{key} no longer departs"
            else:
                assert ours[platform][key] == value, (platform, key)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_external_platforms_are_experimental_until_validated_live(platform):
    caps = get_capabilities(platform)

    assert caps.readiness is Readiness.EXPERIMENTAL
    assert (caps.validated_at, caps.validated_what) == (None, None)
    assert not caps.is_supported


def test_the_sandbox_entry():
    caps = get_capabilities("sandbox")

    assert caps.readiness is Readiness.SUPPORTED
    assert caps.builtin
    assert caps.validated_what
    assert (caps.text_limit, caps.text_counter) == (500, Counter.GRAPHEMES)
    assert (caps.max_images, caps.max_videos) == (4, 1)
    assert caps.supports_threads and caps.supports_alt_text
    assert caps.idempotency == "header"


@pytest.mark.parametrize(
    "platform, limit, counter, daily_cap",
    [
        ("mastodon", 500, Counter.MASTODON, None),
        ("bluesky", 300, Counter.GRAPHEMES, 11666),
        ("linkedin", 3000, Counter.CODE_POINTS, None),
        ("x", 280, Counter.X_WEIGHTED, None),
        ("threads", 500, Counter.THREADS, 250),
        ("instagram", 2200, Counter.CODE_POINTS, 100),
        ("tiktok", 2200, Counter.UTF16, None),
        ("youtube", 5000, Counter.UTF8_BYTES, 100),
    ],
)
def test_limits_and_counters(platform, limit, counter, daily_cap):
    caps = get_capabilities(platform)

    assert (caps.text_limit, caps.text_counter, caps.daily_cap) == (limit, counter, daily_cap)


def test_an_unknown_platform_is_a_typed_error():
    with pytest.raises(UnknownPlatform) as caught:
        get_capabilities("myspace")

    assert caught.value.code == "UNKNOWN_PLATFORM"
    assert "sandbox" in caught.value.details["known"]


def test_the_public_view_is_json_serializable():
    view = {name: caps.as_dict() for name, caps in all_capabilities().items()}

    encoded = json.loads(json.dumps(view))
    assert encoded["youtube"]["settings"][0] == {
        "name": "title",
        "type": "string",
        "required": True,
        "max_length": 100,
        "choices": None,
        "help": "Video title (no < or >).",
    }
    assert encoded["x"]["text"]["url_length"] == 23
    assert encoded["mastodon"]["readiness"] == "experimental"


def test_capabilities_are_read_only():
    caps = get_capabilities("x")

    with pytest.raises(AttributeError):
        caps.text_limit = 10_000  # type: ignore[misc]
    with pytest.raises(TypeError):
        caps.media_limits["image_bytes"] = 1  # type: ignore[index]

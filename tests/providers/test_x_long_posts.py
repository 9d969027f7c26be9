"""A long X post (a Premium account's, over 280 weighted characters) reads back with its
`text` cut short; the lookup that settles an unknown outcome compares the full text, which X
returns only in `note_tweet` when asked. The real adapter against the X fake."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from apps.accounts import services as account_services
from apps.providers import httpcall
from apps.providers.base import PublishContext, SegmentPayload, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.x import XFake
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db

LONG = (
    "Our bakery turns ten this week. Thank you to everyone who queued in the rain for the "
    "first sourdough, who told a friend, who brought the jars back. Saturday every loaf is "
    "half price, the ovens open at six, and there is cake for whoever finds the hidden rye "
    "bun. Details & times: https://example.com/ten-years <- see you there!"
)


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def fake(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(httpcall, "sleep", clock.sleep)
    fake = XFake(FaultPlan(hang_s=1.0))
    fake.clock = clock
    return fake


@pytest.fixture
def account(workspace_a, fake, settings):
    settings.X_CLIENT_ID, settings.X_CLIENT_SECRET = "x-client", "x-secret"
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.5
    opened = fake.new_account("alice")
    opened["settings"]["text_limit"] = 25_000  # a Premium account
    yield make_account(
        workspace_a,
        "x",
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
        settings=opened["settings"],
    )
    server.stop()


def _ctx(account) -> PublishContext:
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={},
        rendition_id=61,
        idempotency_base="rendition-61",
    )


def test_a_long_post_whose_answer_was_lost_is_found_by_its_full_text(fake, account):
    assert len(LONG) > 280
    ctx = _ctx(account)
    adapter = get_adapter("x")
    not_before = datetime.now(UTC)
    fake.faults.rates["timeout_after_accept"] = 1.0
    with pytest.raises(ProviderError) as lost:
        adapter.publish_segment(ctx, SegmentPayload(0, LONG), reply_to=None)
    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    fake.faults.rates.clear()

    found = adapter.lookup_segment(ctx, SegmentPayload(0, LONG), not_before=not_before)

    [post] = fake.published()
    assert found is not None and found.provider_post_id == post.id


def test_the_fake_cuts_a_long_posts_text_and_gives_the_rest_only_when_asked(fake, account):
    get_adapter("x").publish_segment(_ctx(account), SegmentPayload(0, LONG), reply_to=None)
    [post] = fake.published()
    plain = fake._post_json(post, {"created_at"})
    asked = fake._post_json(post, {"created_at", "note_tweet"})

    assert plain["text"].endswith("…") and len(plain["text"]) <= 280
    assert "note_tweet" not in plain
    assert asked["note_tweet"]["text"].startswith("Our bakery turns ten")
    assert asked["note_tweet"]["text"].endswith("&lt;- see you there!")


def test_a_different_long_post_sharing_the_first_280_characters_is_not_taken_for_ours(
    fake, account
):
    ctx = _ctx(account)
    adapter = get_adapter("x")
    not_before = datetime.now(UTC)
    adapter.publish_segment(ctx, SegmentPayload(0, LONG + " (v1)"), reply_to=None)

    # The cut-short `text` of both would be the same; the full texts differ.
    assert adapter.lookup_segment(ctx, SegmentPayload(0, LONG), not_before=not_before) is None

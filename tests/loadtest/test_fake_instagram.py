"""The real Instagram adapter against the Instagram fake over real HTTP: a container is
checkpointed before the next request, published once whatever answers are lost, and a
story whose publish answer is lost is left to a person."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers.base import (
    MediaPayload,
    PublishContext,
    PublishedSegment,
    SegmentPayload,
    get_adapter,
)
from apps.providers.errors import Action, ErrorKind, ProviderError
from loadtest.platform_fakes.base import StoredPost
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.instagram import InstagramFake
from loadtest.platform_fakes.meta import graph_id
from loadtest.platform_fakes.server import FakeServer


@pytest.fixture
def fake(settings):
    fake = InstagramFake(FaultPlan(rates={}, processing_s=0.3, hang_s=1.5, retry_after_s=60))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.75
    yield fake
    server.stop()


@pytest.fixture
def account(fake):
    return fake.new_account("shop")


class Saved(list):
    """Every checkpoint the adapter persisted, with how many requests the fake had seen."""


def _ctx(fake, account, *, checkpoint=None, saved=None, settings=None, expires_at=None):
    saved = Saved() if saved is None else saved
    return PublishContext(
        account=SocialAccount(
            platform="instagram",
            remote_id=account["remote_id"],
            handle=account["handle"],
            token_expires_at=expires_at,
        ),
        credentials=dict(account["credentials"]),
        settings=settings or {},
        rendition_id=1,
        idempotency_base="rendition-1",
        checkpoint=dict(checkpoint or {}),
        checkpoint_saver=lambda cp: saved.append((len(fake.calls), cp)),
    )


def _segment(text="Fresh rye, out of the oven", kind="image"):
    media = MediaPayload(
        media_id=1,
        kind=kind,
        mime_type="video/mp4" if kind == "video" else "image/jpeg",
        size_bytes=10,
        alt_text="",
        open=lambda: None,
        public_url=f"https://media.example.com/s/1.{'mp4' if kind == 'video' else 'jpg'}",
    )
    return SegmentPayload(0, text, [media])


def _poll_until_done(adapter, ctx, pending, *, limit_s=5.0):
    deadline = time.monotonic() + limit_s
    while pending.pending:
        assert time.monotonic() < deadline, "the container never finished"
        time.sleep(0.1)
        pending = adapter.poll_segment(ctx, pending)
    return pending


def test_a_container_is_checkpointed_before_the_next_request_then_published_once(fake, account):
    adapter = get_adapter("instagram")
    saved = Saved()
    ctx = _ctx(fake, account, saved=saved)

    pending = adapter.publish_segment(ctx, _segment(), reply_to=None)

    assert pending.pending
    calls_then, checkpoint = saved[0]
    assert calls_then == 1  # persisted right after the container came back
    assert checkpoint["containers"]["0"]["id"] == pending.provider_post_id
    done = _poll_until_done(adapter, ctx, pending)
    [post] = fake.published()
    assert done.provider_post_id == post.id
    assert post.text == "Fresh rye, out of the oven"
    assert done.provider_url == f"https://www.instagram.com/p/{post.id}/"


def test_a_lost_publish_answer_and_a_repeated_attempt_make_one_post(fake, account):
    adapter = get_adapter("instagram")
    saved = Saved()
    ctx = _ctx(fake, account, saved=saved)
    pending = adapter.publish_segment(ctx, _segment(), reply_to=None)
    time.sleep(0.4)
    fake.faults.rates["timeout_after_accept"] = 1.0

    with pytest.raises(ProviderError) as lost:
        adapter.poll_segment(ctx, pending)

    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    fake.faults.rates.clear()
    # The next attempt starts from what was persisted, as a new run would.
    again = _ctx(fake, account, checkpoint=saved[-1][1])
    result = adapter.publish_segment(again, _segment(), reply_to=None)
    [post] = fake.published()
    assert not result.pending
    assert result.provider_post_id == post.id
    assert fake.container_creations == 1


def test_a_rate_limited_status_poll_waits_and_duplicates_nothing(fake, account):
    adapter = get_adapter("instagram")
    saved = Saved()
    ctx = _ctx(fake, account, saved=saved)
    pending = adapter.publish_segment(ctx, _segment(kind="video"), reply_to=None)
    fake.faults.rates["poll_rate_limit"] = 1.0

    with pytest.raises(ProviderError) as throttled:
        adapter.poll_segment(ctx, pending)

    assert throttled.value.kind == ErrorKind.RATE_LIMITED
    assert throttled.value.retry_at >= timezone.now() + timedelta(seconds=50)
    fake.faults.rates.clear()
    again = _ctx(fake, account, checkpoint=saved[-1][1])
    resumed = adapter.publish_segment(again, _segment(kind="video"), reply_to=None)
    assert resumed.provider_post_id == pending.provider_post_id
    done = _poll_until_done(adapter, again, resumed)
    [post] = fake.published()
    assert done.provider_post_id == post.id
    assert post.media == ["video"]
    assert fake.container_creations == 1


def test_a_story_whose_publish_answer_is_lost_goes_to_a_person(fake, account):
    adapter = get_adapter("instagram")
    saved = Saved()
    ctx = _ctx(fake, account, saved=saved, settings={"media_type": "STORIES"})
    pending = adapter.publish_segment(ctx, _segment(), reply_to=None)
    time.sleep(0.4)
    fake.faults.rates["timeout_after_accept"] = 1.0
    with pytest.raises(ProviderError):
        adapter.poll_segment(ctx, pending)
    fake.faults.rates.clear()

    again = _ctx(fake, account, checkpoint=saved[-1][1], settings={"media_type": "STORIES"})
    with pytest.raises(ProviderError) as verify:
        adapter.lookup_segment(again, _segment(), not_before=timezone.now())

    assert verify.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert verify.value.retryable is False
    assert verify.value.action == Action.VERIFY
    assert verify.value.code == "story_not_findable"
    assert len(fake.published()) == 1
    assert ("GET", f"/v23.0/{account['remote_id']}/media") not in fake.calls
    # A repeated attempt says the same, and never publishes again.
    with pytest.raises(ProviderError) as repeated:
        adapter.publish_segment(again, _segment(), reply_to=None)
    assert repeated.value.code == "story_not_findable"
    assert len(fake.published()) == 1


def test_a_story_without_a_container_cannot_be_looked_up(fake, account):
    adapter = get_adapter("instagram")
    ctx = _ctx(fake, account, settings={"media_type": "STORIES"})

    with pytest.raises(ProviderError) as verify:
        adapter.lookup_segment(ctx, _segment(""), not_before=timezone.now())

    assert verify.value.code == "story_not_findable"
    assert fake.calls == []


def test_failed_processing_is_a_content_rejection_with_the_subcode(fake, account):
    adapter = get_adapter("instagram")
    fake.faults.rates["processing_fails"] = 1.0
    ctx = _ctx(fake, account)
    pending = adapter.publish_segment(ctx, _segment(), reply_to=None)
    time.sleep(0.4)

    with pytest.raises(ProviderError) as failed:
        adapter.poll_segment(ctx, pending)

    assert failed.value.kind == ErrorKind.CONTENT_REJECTED
    assert failed.value.code == "2207026"
    assert fake.published() == []


def test_the_quota_and_a_token_refresh_are_read_from_the_platform(fake, account):
    adapter = get_adapter("instagram")
    ctx = _ctx(fake, account)
    _poll_until_done(adapter, ctx, adapter.publish_segment(ctx, _segment(), reply_to=None))

    assert adapter.quota_usage(ctx) == {"used": 1, "total": 100, "window_s": 86400}
    soon = timezone.now() + timedelta(days=2)
    fresh = adapter.refresh_credentials(ctx.account, {**account["credentials"]})
    assert fresh is None  # a token with weeks left is kept
    ctx.account.token_expires_at = soon
    fresh = adapter.refresh_credentials(ctx.account, {**account["credentials"]})
    assert fresh["access_token"] != account["credentials"]["access_token"]
    assert fake.tokens[fresh["access_token"]] == account["remote_id"]


# --- the first comment ------------------------------------------------------------------


def _own_media(fake, account, text="Fresh rye"):
    post = fake.store(StoredPost(id=graph_id(), account=account["remote_id"], text=text))
    return PublishedSegment(provider_post_id=post.id)


def test_a_first_comment_goes_under_the_media_as_the_account_and_is_found_again(fake, account):
    adapter = get_adapter("instagram")
    ctx = _ctx(fake, account)
    media = _own_media(fake, account)
    fake.add_comment(media.provider_post_id, "a_visitor", "Looks great")

    made = adapter.publish_comment(ctx, media, "Recipe in bio", key="c-1")

    stored = fake.comments_on(media.provider_post_id)
    assert [(c["from"]["username"], c["message"]) for c in stored] == [
        ("a_visitor", "Looks great"),
        ("shop", "Recipe in bio"),
    ]
    assert made.provider_post_id == stored[1]["id"]
    found = adapter.find_comment(ctx, media, "Recipe in bio", key="c-1")
    assert found is not None and found.provider_post_id == made.provider_post_id
    # The visitor's words are not ours, and another text is not our comment.
    assert adapter.find_comment(ctx, media, "Looks great", key="c-1") is None


def test_a_lost_comment_answer_is_found_in_the_listing_not_sent_twice(fake, account):
    adapter = get_adapter("instagram")
    ctx = _ctx(fake, account)
    media = _own_media(fake, account)
    fake.faults.rates["timeout_after_accept"] = 1.0

    with pytest.raises(ProviderError) as lost:
        adapter.publish_comment(ctx, media, "Recipe in bio", key="c-1")

    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    fake.faults.rates.clear()
    found = adapter.find_comment(ctx, media, "Recipe in bio", key="c-1")
    assert found is not None
    assert [c["id"] for c in fake.comments_on(media.provider_post_id)] == [found.provider_post_id]


# A 5xx to a write leaves its outcome unknown to the adapter; the lookup then says none was made.
@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("rate_limit", ErrorKind.RATE_LIMITED),
        ("server_error_before", ErrorKind.OUTCOME_UNKNOWN),
    ],
)
def test_a_comment_refused_before_it_is_stored_leaves_nothing(fake, account, fault, kind):
    adapter = get_adapter("instagram")
    ctx = _ctx(fake, account)
    media = _own_media(fake, account)
    fake.faults.rates[fault] = 1.0

    with pytest.raises(ProviderError) as refused:
        adapter.publish_comment(ctx, media, "Hi", key="c-1")

    assert refused.value.kind == kind
    assert fake.comments_on(media.provider_post_id) == []
    fake.faults.rates.clear()
    assert adapter.find_comment(ctx, media, "Hi", key="c-1") is None


def test_a_lagging_listing_hides_a_new_comment_for_a_while(fake, account):
    adapter = get_adapter("instagram")
    ctx = _ctx(fake, account)
    media = _own_media(fake, account)
    fake.faults.rates["listing_lag"] = 1.0
    fake.faults.listing_lag_s = 60

    adapter.publish_comment(ctx, media, "Recipe in bio", key="c-1")

    assert len(fake.comments_on(media.provider_post_id)) == 1
    assert adapter.find_comment(ctx, media, "Recipe in bio", key="c-1") is None


def test_another_accounts_media_takes_no_comment(fake, account):
    other = fake.new_account("rival")
    media = _own_media(fake, other)

    with pytest.raises(ProviderError):
        get_adapter("instagram").publish_comment(_ctx(fake, account), media, "Hi", key="c-1")

    assert fake.comments_on(media.provider_post_id) == []

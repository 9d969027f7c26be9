"""The real Facebook Pages adapter against the Facebook fake over real HTTP: posts and
photos publish once, and a video (by URL, or by upload_phase when the account says so)
counts as published only once Facebook has processed it. The Resumable Upload API path:
test_fake_facebook_video.py."""

import io
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers.base import MediaPayload, PublishContext, SegmentPayload, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from loadtest.platform_fakes.facebook import CHUNK, FacebookFake
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.server import FakeServer

VIDEO_BYTES = b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 600  # about 150 kB


@pytest.fixture
def fake(settings):
    fake = FacebookFake(FaultPlan(rates={}, processing_s=0.6, hang_s=1.5, retry_after_s=60))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.75
    yield fake
    server.stop()


@pytest.fixture
def page(fake):
    return fake.new_account("Bakery")


def _ctx(fake, page, *, checkpoint=None, saved=None, video_upload=None):
    saved = [] if saved is None else saved
    account = SocialAccount(platform="facebook", remote_id=page["remote_id"], handle="Bakery")
    if video_upload:
        account.settings = {"video_upload": video_upload}
    return PublishContext(
        account=account,
        credentials=dict(page["credentials"]),
        settings=dict(page["settings"]),
        rendition_id=1,
        idempotency_base="rendition-1",
        checkpoint=dict(checkpoint or {}),
        checkpoint_saver=lambda cp: saved.append((len(fake.calls), cp)),
    )


def _media(kind, *, public=True):
    data = VIDEO_BYTES if kind == "video" else b"\xff\xd8jpeg"
    return MediaPayload(
        media_id=1,
        kind=kind,
        mime_type="video/mp4" if kind == "video" else "image/jpeg",
        size_bytes=len(data),
        alt_text="",
        open=lambda: io.BytesIO(data),
        public_url=f"https://media.example.com/s/1.{'mp4' if kind == 'video' else 'jpg'}"
        if public
        else None,
    )


def _done(adapter, ctx, pending, *, limit_s=6.0):
    polls = 0
    deadline = time.monotonic() + limit_s
    while pending.pending:
        assert time.monotonic() < deadline, "the video never became ready"
        time.sleep(0.1)
        pending = adapter.poll_segment(ctx, pending)
        polls += 1
    return pending, polls


def test_a_text_post_and_a_photo_each_publish_once(fake, page):
    adapter = get_adapter("facebook")
    ctx = _ctx(fake, page)

    text = adapter.publish_segment(ctx, SegmentPayload(0, "Open till six"), reply_to=None)
    photo = adapter.publish_segment(
        ctx, SegmentPayload(0, "Today's loaf", [_media("image")]), reply_to=None
    )

    posts = {p.id: p for p in fake.published()}
    assert set(posts) == {text.provider_post_id, photo.provider_post_id}
    assert posts[photo.provider_post_id].media == ["image"]
    number = text.provider_post_id.partition("_")[2]
    assert text.provider_url == f"https://www.facebook.com/{page['remote_id']}/posts/{number}"


def test_a_video_by_url_goes_to_graph_video_and_waits_for_processing(fake, page):
    adapter = get_adapter("facebook")
    saved = []
    ctx = _ctx(fake, page, saved=saved)

    pending = adapter.publish_segment(
        ctx, SegmentPayload(0, "Behind the oven", [_media("video")]), reply_to=None
    )

    assert pending.pending
    [video] = fake.published()
    assert video.state == "processing"
    # Facebook first answers upload_complete: uploaded, not yet published.
    still = adapter.poll_segment(ctx, pending)
    assert still.pending
    done, polls = _done(adapter, ctx, still)
    assert done.provider_post_id == video.id
    assert video.state == "published"
    assert done.provider_url == f"https://www.facebook.com/{page['remote_id']}/videos/{video.id}/"
    assert polls >= 1


def test_a_video_without_a_public_url_may_go_up_by_upload_phase(fake, page):
    adapter = get_adapter("facebook")
    saved = []
    ctx = _ctx(fake, page, saved=saved, video_upload="upload_phase")

    pending = adapter.publish_segment(
        ctx, SegmentPayload(0, "Kneading", [_media("video", public=False)]), reply_to=None
    )

    assert pending.pending
    transfers = [c for c in fake.calls if c[1].endswith("/videos")]
    assert len(transfers) == 2 + -(-len(VIDEO_BYTES) // CHUNK)  # start, chunks, finish
    kept = [(calls, cp) for calls, cp in saved if cp["videos"]["0"].get("video_id")]
    assert kept[0][1]["videos"]["0"] == {
        "protocol": "upload_phase",
        "video_id": pending.provider_post_id,
    }
    assert kept[0][0] == 1  # the video id is kept before the first chunk goes
    done, _ = _done(adapter, ctx, pending)
    [video] = fake.published()
    assert (video.id, video.text, video.state) == (done.provider_post_id, "Kneading", "published")


def test_a_lost_finish_answer_and_a_repeated_attempt_make_one_video(fake, page):
    adapter = get_adapter("facebook")
    saved = []
    ctx = _ctx(fake, page, saved=saved, video_upload="upload_phase")
    fake.faults.processing_s = 3.0  # still processing when the attempt is repeated
    fake.faults.rates["timeout_after_accept"] = 1.0
    segment = SegmentPayload(0, "Kneading", [_media("video", public=False)])

    with pytest.raises(ProviderError) as lost:
        adapter.publish_segment(ctx, segment, reply_to=None)

    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    fake.faults.rates.clear()
    again = _ctx(fake, page, checkpoint=saved[-1][1], video_upload="upload_phase")
    resumed = adapter.publish_segment(again, segment, reply_to=None)
    found = adapter.lookup_segment(again, segment, not_before=timezone.now())
    [video] = fake.published()
    assert resumed.pending and resumed.provider_post_id == video.id
    assert found.pending and found.provider_post_id == video.id
    done, _ = _done(adapter, again, resumed)
    assert done.provider_post_id == video.id
    assert len(fake.published()) == 1
    assert not adapter.lookup_segment(again, segment, not_before=timezone.now()).pending


def test_a_rate_limited_status_poll_waits_and_duplicates_nothing(fake, page):
    adapter = get_adapter("facebook")
    ctx = _ctx(fake, page)
    pending = adapter.publish_segment(
        ctx, SegmentPayload(0, "Behind the oven", [_media("video")]), reply_to=None
    )
    fake.faults.rates["poll_rate_limit"] = 1.0

    with pytest.raises(ProviderError) as throttled:
        adapter.poll_segment(ctx, pending)

    assert throttled.value.kind == ErrorKind.RATE_LIMITED
    assert throttled.value.retry_at >= timezone.now() + timedelta(seconds=50)
    fake.faults.rates.clear()
    done, _ = _done(adapter, ctx, pending)
    [video] = fake.published()
    assert done.provider_post_id == video.id


def test_a_video_facebook_cannot_process_is_rejected(fake, page):
    adapter = get_adapter("facebook")
    fake.faults.rates["processing_fails"] = 1.0
    ctx = _ctx(fake, page)
    pending = adapter.publish_segment(
        ctx, SegmentPayload(0, "Broken", [_media("video")]), reply_to=None
    )
    time.sleep(0.7)

    with pytest.raises(ProviderError) as failed:
        adapter.poll_segment(ctx, pending)

    assert failed.value.kind == ErrorKind.CONTENT_REJECTED
    assert fake.published() == []


def test_a_lost_feed_answer_is_found_in_the_published_posts(fake, page):
    adapter = get_adapter("facebook")
    ctx = _ctx(fake, page)
    fake.faults.rates["timeout_after_accept"] = 1.0
    with pytest.raises(ProviderError) as lost:
        adapter.publish_segment(ctx, SegmentPayload(0, "Open till six"), reply_to=None)
    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    fake.faults.rates.clear()

    found = adapter.lookup_segment(
        ctx, SegmentPayload(0, "Open till six"), not_before=timezone.now() - timedelta(minutes=1)
    )

    [post] = fake.published()
    assert found.provider_post_id == post.id


# --- the first comment ------------------------------------------------------------------


def test_a_first_comment_goes_under_the_post_as_the_page_and_is_found_again(fake, page):
    adapter = get_adapter("facebook")
    ctx = _ctx(fake, page)
    post = adapter.publish_segment(ctx, SegmentPayload(0, "Open till six"), reply_to=None)
    fake.add_comment(post.provider_post_id, "A neighbour", "See you there")

    made = adapter.publish_comment(ctx, post, "Menu in the photos", key="c-1")

    ours = [c for c in fake.comments.values() if c["from"]["id"] == page["remote_id"]]
    assert [(c["post"], c["message"]) for c in ours] == [
        (post.provider_post_id, "Menu in the photos")
    ]
    assert made.provider_post_id == ours[0]["id"]
    assert made.provider_url == f"https://www.facebook.com/{made.provider_post_id}"
    assert [p.id for p in fake.published()] == [post.provider_post_id]  # not a post
    found = adapter.find_comment(ctx, post, "Menu in the photos", key="c-1")
    assert found is not None and found.provider_post_id == made.provider_post_id
    assert adapter.find_comment(ctx, post, "See you there", key="c-1") is None


def test_a_lost_comment_answer_is_found_under_the_post_not_sent_twice(fake, page):
    adapter = get_adapter("facebook")
    ctx = _ctx(fake, page)
    post = adapter.publish_segment(ctx, SegmentPayload(0, "Open till six"), reply_to=None)
    fake.faults.rates["timeout_after_accept"] = 1.0

    with pytest.raises(ProviderError) as lost:
        adapter.publish_comment(ctx, post, "Menu in the photos", key="c-1")

    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    fake.faults.rates.clear()
    found = adapter.find_comment(ctx, post, "Menu in the photos", key="c-1")
    assert found is not None
    assert list(fake.comments) == [found.provider_post_id]


def test_a_rate_limited_comment_leaves_nothing_and_is_not_found(fake, page):
    adapter = get_adapter("facebook")
    ctx = _ctx(fake, page)
    post = adapter.publish_segment(ctx, SegmentPayload(0, "Open till six"), reply_to=None)
    fake.faults.rates["rate_limit"] = 1.0

    with pytest.raises(ProviderError) as throttled:
        adapter.publish_comment(ctx, post, "Menu in the photos", key="c-1")

    assert throttled.value.kind == ErrorKind.RATE_LIMITED
    fake.faults.rates.clear()
    assert fake.comments == {}
    assert adapter.find_comment(ctx, post, "Menu in the photos", key="c-1") is None


def test_a_comment_under_a_deleted_post_fails_saying_the_post_is_gone(fake, page):
    adapter = get_adapter("facebook")
    ctx = _ctx(fake, page)
    post = adapter.publish_segment(ctx, SegmentPayload(0, "Open till six"), reply_to=None)
    adapter.delete_post(ctx, post)

    with pytest.raises(ProviderError) as gone:
        adapter.publish_comment(ctx, post, "Menu in the photos", key="c-1")

    assert (gone.value.kind, gone.value.code) == (ErrorKind.CONTENT_REJECTED, "post_gone")
    assert fake.comments == {}

"""TikTok through its adapter against a respx fake of the Content Posting API: creator
info, direct-post init, chunked upload, status polling to PUBLISH_COMPLETE or FAILED, the
error envelope, the single-attempt rule and reconciliation, tokens that rotate."""

import io
import json
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import respx
import time_machine

from apps.accounts import services as account_services
from apps.accounts.models import SocialAccount
from apps.providers.base import MediaPayload, PublishContext, PublishedSegment, SegmentPayload
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.tiktok import media as tiktok_media
from apps.providers.tiktok.adapter import POLL_SCHEDULE, TikTokAdapter

API = "https://open.tiktokapis.com/v2"
UPLOAD = "https://open-upload.tiktokapis.com/video/?upload_id=67890&upload_token=Xza123"
PUBLISH_ID = "v_pub_file~v2-1.7123456789"
CREATOR = {
    "creator_avatar_url": "https://p16.example.com/a.jpeg",
    "creator_username": "baker",
    "creator_nickname": "The Baker",
    "privacy_level_options": ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"],
    "comment_disabled": False,
    "duet_disabled": True,
    "stitch_disabled": False,
    "max_video_post_duration_sec": 600,
}


def _ok(data):
    return httpx.Response(
        200, json={"data": data, "error": {"code": "ok", "message": "", "log_id": "2024LOG"}}
    )


def _err(status, code, message=""):
    return httpx.Response(
        status, json={"data": {}, "error": {"code": code, "message": message, "log_id": "L"}}
    )


@pytest.fixture
def fake():
    with respx.mock(assert_all_called=False) as router:
        router.post(f"{API}/post/publish/creator_info/query/").mock(return_value=_ok(CREATOR))
        yield router


@pytest.fixture(autouse=True)
def _apps(settings):
    settings.TIKTOK_CLIENT_KEY = "tt-key"
    settings.TIKTOK_CLIENT_SECRET = "tt-secret"


def _ctx(settings=None, checkpoint=None):
    return PublishContext(
        account=SocialAccount(platform="tiktok", remote_id="open-1", handle="baker"),
        credentials={"access_token": "act.TOKEN"},
        settings={"privacy_level": "PUBLIC_TO_EVERYONE"} if settings is None else settings,
        rendition_id=5,
        idempotency_base="r5",
        checkpoint={} if checkpoint is None else checkpoint,
    )


def _video(data=b"0123456789", url=None):
    return MediaPayload(
        media_id=1,
        kind="video",
        mime_type="video/mp4",
        size_bytes=len(data),
        alt_text="",
        open=lambda: io.BytesIO(data),
        public_url=url,
    )


def _json(request):
    return json.loads(request.content)


def _status(fake, *bodies):
    return fake.post(f"{API}/post/publish/status/fetch/").mock(
        side_effect=[_ok(body) for body in bodies]
    )


def test_a_video_is_initialised_uploaded_and_left_pending(fake):
    init = fake.post(f"{API}/post/publish/video/init/").mock(
        return_value=_ok({"publish_id": PUBLISH_ID, "upload_url": UPLOAD})
    )
    upload = fake.put(UPLOAD).respond(201)
    ctx = _ctx({"privacy_level": "PUBLIC_TO_EVERYONE", "disable_comment": True})

    pending = TikTokAdapter().publish_segment(
        ctx, SegmentPayload(0, "Sourdough #bread", [_video()]), reply_to=None
    )

    assert pending == PublishedSegment(provider_post_id=PUBLISH_ID, pending=True)
    assert ctx.checkpoint["publish_id"] == PUBLISH_ID
    assert init.calls.last.request.headers["Authorization"] == "Bearer act.TOKEN"
    assert _json(init.calls.last.request) == {
        "post_info": {
            "title": "Sourdough #bread",
            "privacy_level": "PUBLIC_TO_EVERYONE",
            "disable_comment": True,
            "disable_duet": True,  # the creator turned duets off
            "disable_stitch": False,
            "brand_content_toggle": False,
            "brand_organic_toggle": False,
        },
        "source_info": {
            "source": "FILE_UPLOAD",
            "video_size": 10,
            "chunk_size": 10,
            "total_chunk_count": 1,
        },
    }
    put = upload.calls.last.request
    assert put.content == b"0123456789"
    assert put.headers["Content-Range"] == "bytes 0-9/10"
    assert put.headers["Content-Type"] == "video/mp4"
    assert "Authorization" not in put.headers


def test_a_large_video_goes_in_chunks_the_last_taking_the_remainder(fake, monkeypatch):
    monkeypatch.setattr(tiktok_media, "SINGLE_CHUNK_MAX", 4)
    monkeypatch.setattr(tiktok_media, "CHUNK_SIZE", 4)
    init = fake.post(f"{API}/post/publish/video/init/").mock(
        return_value=_ok({"publish_id": PUBLISH_ID, "upload_url": UPLOAD})
    )
    upload = fake.put(UPLOAD).mock(side_effect=[httpx.Response(206), httpx.Response(201)])

    TikTokAdapter().publish_segment(_ctx(), SegmentPayload(0, "v", [_video()]), reply_to=None)

    source = _json(init.calls.last.request)["source_info"]
    assert (source["chunk_size"], source["total_chunk_count"]) == (4, 2)
    assert [c.request.headers["Content-Range"] for c in upload.calls] == [
        "bytes 0-3/10",
        "bytes 4-9/10",
    ]
    assert upload.calls[1].request.content == b"456789"


def test_pull_from_url_sends_the_signed_url(fake):
    init = fake.post(f"{API}/post/publish/video/init/").mock(
        return_value=_ok({"publish_id": PUBLISH_ID})
    )
    TikTokAdapter().publish_segment(
        _ctx({"privacy_level": "SELF_ONLY", "video_source": "PULL_FROM_URL"}),
        SegmentPayload(0, "v", [_video(url="https://media.example.com/s/v.mp4")]),
        reply_to=None,
    )
    assert _json(init.calls.last.request)["source_info"] == {
        "source": "PULL_FROM_URL",
        "video_url": "https://media.example.com/s/v.mp4",
    }


def test_photos_are_pulled_from_their_urls(fake):
    init = fake.post(f"{API}/post/publish/content/init/").mock(
        return_value=_ok({"publish_id": "p_pub_url~v2.1"})
    )
    photos = [
        MediaPayload(i, "image", "image/jpeg", 5, "", io.BytesIO, public_url=f"https://m/{i}.jpg")
        for i in (1, 2)
    ]
    pending = TikTokAdapter().publish_segment(
        _ctx({"privacy_level": "SELF_ONLY", "title": "Loaves"}),
        SegmentPayload(0, "Two loaves", photos),
        reply_to=None,
    )
    body = _json(init.calls.last.request)
    assert body["post_mode"] == "DIRECT_POST" and body["media_type"] == "PHOTO"
    assert body["source_info"] == {
        "source": "PULL_FROM_URL",
        "photo_images": ["https://m/1.jpg", "https://m/2.jpg"],
        "photo_cover_index": 0,
    }
    assert body["post_info"]["title"] == "Loaves"
    assert body["post_info"]["description"] == "Two loaves"
    assert pending.provider_post_id == "p_pub_url~v2.1"


def test_the_privacy_level_is_required_and_must_be_offered(fake):
    init = fake.post(f"{API}/post/publish/video/init/")
    with pytest.raises(ProviderError) as err:
        TikTokAdapter().publish_segment(
            _ctx(settings={}), SegmentPayload(0, "v", [_video()]), reply_to=None
        )
    assert err.value.code == "privacy_level_required"
    assert "SELF_ONLY" in err.value.message

    fake.post(f"{API}/post/publish/creator_info/query/").mock(
        return_value=_ok({**CREATOR, "privacy_level_options": ["SELF_ONLY"]})
    )
    with pytest.raises(ProviderError) as err:
        TikTokAdapter().publish_segment(_ctx(), SegmentPayload(0, "v", [_video()]), reply_to=None)
    assert err.value.code == "privacy_level_option_mismatch"
    assert err.value.kind == ErrorKind.CONTENT_REJECTED
    assert not init.called


def test_polling_goes_from_processing_to_the_public_post(fake):
    status = _status(
        fake,
        {"status": "PROCESSING_UPLOAD", "uploaded_bytes": 5},
        {"status": "PROCESSING_DOWNLOAD"},
        {"status": "PUBLISH_COMPLETE", "publicaly_available_post_id": [7312345678901234567]},
    )
    adapter, ctx = TikTokAdapter(), _ctx(checkpoint={"publish_id": PUBLISH_ID})
    pending = PublishedSegment(provider_post_id=PUBLISH_ID, pending=True)

    assert adapter.poll_segment(ctx, pending) == pending
    assert adapter.poll_segment(ctx, pending) == pending
    published = adapter.poll_segment(ctx, pending)

    assert _json(status.calls.last.request) == {"publish_id": PUBLISH_ID}
    assert published.provider_post_id == "7312345678901234567"
    assert published.provider_url == "https://www.tiktok.com/@baker/video/7312345678901234567"
    assert published.pending is False


def test_a_complete_public_post_waits_a_while_for_moderation_to_name_it(fake):
    _status(fake, *[{"status": "PUBLISH_COMPLETE", "publicaly_available_post_id": []}] * 2)
    adapter = TikTokAdapter()
    ctx = _ctx(checkpoint={"publish_id": PUBLISH_ID, "privacy_level": "PUBLIC_TO_EVERYONE"})
    pending = PublishedSegment(provider_post_id=PUBLISH_ID, pending=True)

    with time_machine.travel(datetime(2026, 5, 1, 12, 0, tzinfo=UTC), tick=False):
        assert adapter.poll_segment(ctx, pending) == pending
    with time_machine.travel(datetime(2026, 5, 1, 14, 1, tzinfo=UTC), tick=False):
        published = adapter.poll_segment(ctx, pending)

    # Moderation never named it: the post is done, without a public URL.
    assert published.provider_post_id == PUBLISH_ID
    assert published.pending is False and published.provider_url == ""


def test_a_private_post_is_done_without_a_public_id(fake):
    _status(fake, {"status": "PUBLISH_COMPLETE"})
    ctx = _ctx(checkpoint={"publish_id": PUBLISH_ID, "privacy_level": "SELF_ONLY"})
    published = TikTokAdapter().poll_segment(ctx, PublishedSegment(PUBLISH_ID, pending=True))
    assert published == PublishedSegment(
        provider_post_id=PUBLISH_ID, published_at=published.published_at
    )


@pytest.mark.parametrize(
    ("reason", "kind", "retryable"),
    [
        ("file_format_check_failed", ErrorKind.CONTENT_REJECTED, False),
        ("duration_check_failed", ErrorKind.CONTENT_REJECTED, False),
        ("frame_rate_check_failed", ErrorKind.CONTENT_REJECTED, False),
        ("picture_size_check_failed", ErrorKind.CONTENT_REJECTED, False),
        ("video_pull_failed", ErrorKind.CONTENT_REJECTED, False),
        ("photo_pull_failed", ErrorKind.CONTENT_REJECTED, False),
        # Nothing was published, and reading the same publish_id again reads FAILED again:
        # a clean failure, to be retried anew.
        ("internal", ErrorKind.PROVIDER_UNAVAILABLE, False),
    ],
)
def test_a_failed_status_is_classified_by_its_reason(fake, reason, kind, retryable):
    _status(fake, {"status": "FAILED", "fail_reason": reason})
    with pytest.raises(ProviderError) as err:
        TikTokAdapter().poll_segment(_ctx(), PublishedSegment(PUBLISH_ID, pending=True))
    assert (err.value.kind, err.value.retryable, err.value.code) == (kind, retryable, reason)


@pytest.mark.parametrize(
    ("response", "kind", "retryable", "action"),
    [
        (_err(401, "access_token_invalid", "The access token is invalid or not found."),
         ErrorKind.AUTH_EXPIRED, False, Action.RECONNECT),
        (_err(401, "scope_not_authorized"), ErrorKind.PERMISSION_MISSING, False, Action.RECONNECT),
        (_err(403, "scope_permission_missed"), ErrorKind.PERMISSION_MISSING, False,
         Action.RECONNECT),
        (_err(400, "invalid_params"), ErrorKind.CONTENT_REJECTED, False, Action.EDIT),
        (_err(400, "invalid_file_upload"), ErrorKind.CONTENT_REJECTED, False, Action.EDIT),
        (_err(403, "url_ownership_unverified"), ErrorKind.CONTENT_REJECTED, False,
         Action.CONTACT_SUPPORT),
        (_err(403, "unaudited_client_can_only_post_to_private_accounts"),
         ErrorKind.PLAN_RESTRICTED, False, Action.CONTACT_SUPPORT),
        (_err(403, "spam_risk_too_many_posts"), ErrorKind.RATE_LIMITED, True, Action.WAIT),
        (_err(403, "spam_risk_user_banned_from_posting"), ErrorKind.PERMISSION_MISSING, False,
         Action.CONTACT_SUPPORT),
        (_err(403, "spam_risk_text"), ErrorKind.CONTENT_REJECTED, False, Action.EDIT),
        (_err(403, "reached_active_user_cap"), ErrorKind.RATE_LIMITED, True, Action.WAIT),
        (_err(429, "rate_limit_exceeded"), ErrorKind.RATE_LIMITED, True, Action.WAIT),
        # No bytes went to the publish_id it may have made: no post can come of it.
        (_err(500, "internal_error"), ErrorKind.PROVIDER_UNAVAILABLE, True, Action.WAIT),
    ],
)  # fmt: skip
def test_init_errors_are_classified(fake, response, kind, retryable, action):
    fake.post(f"{API}/post/publish/video/init/").mock(return_value=response)
    with pytest.raises(ProviderError) as err:
        TikTokAdapter().publish_segment(_ctx(), SegmentPayload(0, "v", [_video()]), reply_to=None)
    assert (err.value.kind, err.value.retryable, err.value.action) == (kind, retryable, action)
    assert err.value.http_status == response.status_code


def test_rate_limits_carry_when_to_try_again(fake, monkeypatch):
    # Waits count from the database clock; here it agrees with the host's.
    monkeypatch.setattr("apps.common.db_clock._offset", timedelta(0))
    init = fake.post(f"{API}/post/publish/video/init/")
    now = datetime(2026, 5, 1, 15, 30, tzinfo=UTC)
    expected = {
        "rate_limit_exceeded": now + timedelta(minutes=1),
        "spam_risk_too_many_posts": now + timedelta(hours=24),
        "reached_active_user_cap": datetime(2026, 5, 2, tzinfo=UTC),
    }
    for code, retry_at in expected.items():
        init.mock(return_value=_err(429 if code == "rate_limit_exceeded" else 403, code))
        with time_machine.travel(now, tick=False), pytest.raises(ProviderError) as err:
            TikTokAdapter().publish_segment(
                _ctx(), SegmentPayload(0, "v", [_video()]), reply_to=None
            )
        assert err.value.retry_at == retry_at, code


def test_an_init_that_has_tiktok_pull_the_video_is_a_single_attempt_when_its_answer_is_lost(
    fake,
):
    fake.post(f"{API}/post/publish/video/init/").mock(side_effect=httpx.ReadTimeout("slow"))
    adapter = TikTokAdapter()
    ctx = _ctx(settings={"privacy_level": "SELF_ONLY", "video_source": "PULL_FROM_URL"})
    video = _video(url="https://media.example.com/v.mp4")

    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(ctx, SegmentPayload(0, "v", [video]), reply_to=None)

    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert err.value.retryable is False
    assert adapter.is_retry_safe(ctx.account) is False
    assert "publish_id" not in ctx.checkpoint


@pytest.mark.parametrize(
    "failure", [httpx.ReadTimeout("slow"), _err(500, "internal_error")], ids=["lost", "5xx"]
)
def test_an_init_for_our_own_upload_is_retried_when_its_answer_is_lost(fake, failure):
    init = fake.post(f"{API}/post/publish/video/init/")
    if isinstance(failure, Exception):
        init.mock(side_effect=failure)
    else:
        init.mock(return_value=failure)

    with pytest.raises(ProviderError) as err:
        TikTokAdapter().publish_segment(_ctx(), SegmentPayload(0, "v", [_video()]), reply_to=None)

    # A post comes of an init only once TikTok has every byte, and none was sent.
    assert err.value.kind in (ErrorKind.NETWORK_BEFORE_SEND, ErrorKind.PROVIDER_UNAVAILABLE)
    assert err.value.retryable is True


def test_an_interrupted_chunk_before_the_last_is_safe_to_start_over(fake, monkeypatch):
    monkeypatch.setattr(tiktok_media, "SINGLE_CHUNK_MAX", 4)
    monkeypatch.setattr(tiktok_media, "CHUNK_SIZE", 4)
    fake.post(f"{API}/post/publish/video/init/").mock(
        return_value=_ok({"publish_id": PUBLISH_ID, "upload_url": UPLOAD})
    )
    fake.put(UPLOAD).mock(side_effect=httpx.ConnectError("reset"))
    with pytest.raises(ProviderError) as err:
        TikTokAdapter().publish_segment(_ctx(), SegmentPayload(0, "v", [_video()]), reply_to=None)
    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE
    assert err.value.retryable is True


def test_a_lost_answer_to_the_last_chunk_leaves_the_post_to_polling(fake):
    fake.post(f"{API}/post/publish/video/init/").mock(
        return_value=_ok({"publish_id": PUBLISH_ID, "upload_url": UPLOAD})
    )
    put = fake.put(UPLOAD).mock(side_effect=httpx.ReadTimeout("slow"))
    # TikTok holds every byte: the chunk arrived, only its answer was lost.
    _status(fake, {"status": "PROCESSING_UPLOAD", "uploaded_bytes": 10})
    pending = TikTokAdapter().publish_segment(
        _ctx(), SegmentPayload(0, "v", [_video()]), reply_to=None
    )
    assert pending == PublishedSegment(provider_post_id=PUBLISH_ID, pending=True)
    assert put.call_count == 1


def test_a_last_chunk_tiktok_never_got_is_sent_again(fake):
    fake.post(f"{API}/post/publish/video/init/").mock(
        return_value=_ok({"publish_id": PUBLISH_ID, "upload_url": UPLOAD})
    )
    put = fake.put(UPLOAD).mock(side_effect=[httpx.ReadTimeout("slow"), httpx.Response(201)])
    _status(fake, {"status": "PROCESSING_UPLOAD", "uploaded_bytes": 0})
    pending = TikTokAdapter().publish_segment(
        _ctx(), SegmentPayload(0, "v", [_video()]), reply_to=None
    )
    assert pending.pending and put.call_count == 2
    assert put.calls[1].request.headers["Content-Range"] == "bytes 0-9/10"


def test_an_upload_still_missing_bytes_long_after_init_fails_cleanly(fake):
    _status(fake, {"status": "PROCESSING_UPLOAD", "uploaded_bytes": 4})
    init_at = (datetime.now(UTC) - timedelta(minutes=11)).isoformat()
    ctx = _ctx(checkpoint={"publish_id": PUBLISH_ID, "video_size": 10, "init_at": init_at})

    with pytest.raises(ProviderError) as err:
        TikTokAdapter().poll_segment(ctx, PublishedSegment(PUBLISH_ID, pending=True))

    assert err.value.code == "upload_incomplete"
    assert err.value.retryable is False and err.value.action == Action.RETRY


def test_an_upload_missing_bytes_soon_after_init_is_waited_for(fake):
    _status(fake, {"status": "PROCESSING_UPLOAD", "uploaded_bytes": 4})
    init_at = datetime.now(UTC).isoformat()
    ctx = _ctx(checkpoint={"publish_id": PUBLISH_ID, "video_size": 10, "init_at": init_at})

    pending = TikTokAdapter().poll_segment(ctx, PublishedSegment(PUBLISH_ID, pending=True))

    assert pending.pending


def test_reconciliation_reads_the_stored_publish_id(fake):
    status = _status(
        fake,
        {"status": "PUBLISH_COMPLETE", "publicaly_available_post_id": [42]},
        {"status": "FAILED", "fail_reason": "internal"},
        {"status": "PROCESSING_UPLOAD"},
    )
    adapter, since = TikTokAdapter(), datetime.now(UTC)
    ctx = _ctx(checkpoint={"publish_id": PUBLISH_ID})

    found = adapter.lookup_segment(ctx, SegmentPayload(0, "v"), not_before=since)
    assert found.provider_post_id == "42"
    assert adapter.lookup_segment(ctx, SegmentPayload(0, "v"), not_before=since) is None
    still = adapter.lookup_segment(ctx, SegmentPayload(0, "v"), not_before=since)
    assert still == PublishedSegment(provider_post_id=PUBLISH_ID, pending=True)
    assert status.call_count == 3


def test_reconciliation_without_a_publish_id_lists_the_creators_videos(fake):
    since = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    listing = fake.post(f"{API}/video/list/").mock(
        return_value=_ok(
            {
                "videos": [
                    {"id": "1", "video_description": "Sourdough", "create_time": 1700000000,
                     "share_url": "https://www.tiktok.com/@baker/video/1"},
                    {"id": "3", "title": "Sourdough", "video_description": "",
                     "create_time": int(since.timestamp()) + 60,
                     "share_url": "https://www.tiktok.com/@baker/video/3"},
                    {"id": "2", "title": "", "video_description": "Sourdough",
                     "create_time": int(since.timestamp()) + 60,
                     "share_url": "https://www.tiktok.com/@baker/video/2"},
                ],
                "cursor": 0,
                "has_more": False,
            }
        )
    )  # fmt: skip
    adapter = TikTokAdapter()

    found = adapter.lookup_segment(_ctx(), SegmentPayload(0, "Sourdough"), not_before=since)

    assert found.provider_post_id == "2"
    assert found.provider_url == "https://www.tiktok.com/@baker/video/2"
    request = listing.calls.last.request
    assert parse_qs(urlsplit(str(request.url)).query)["fields"] == [
        "id,video_description,create_time,share_url"
    ]
    assert _json(request) == {"max_count": 20}
    assert adapter.lookup_segment(_ctx(), SegmentPayload(0, "Rye"), not_before=since) is None


def test_reconciliation_matches_a_long_caption_by_its_listed_first_150_characters(fake):
    since = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    caption = "Sourdough " * 40
    fake.post(f"{API}/video/list/").mock(
        return_value=_ok(
            {
                "videos": [
                    {"id": "9", "video_description": caption[:150],
                     "create_time": int(since.timestamp()) + 5, "share_url": ""},
                ],
                "cursor": 0,
                "has_more": False,
            }
        )
    )  # fmt: skip

    found = TikTokAdapter().lookup_segment(_ctx(), SegmentPayload(0, caption), not_before=since)

    assert found.provider_post_id == "9"


def test_the_poll_schedule_is_long(fake):
    assert TikTokAdapter().poll_schedule is POLL_SCHEDULE
    assert POLL_SCHEDULE.next_delay(polls_done=0, elapsed_s=0) == 5
    assert POLL_SCHEDULE.next_delay(polls_done=1, elapsed_s=5) == 10
    assert POLL_SCHEDULE.next_delay(polls_done=30, elapsed_s=7200) == 600
    assert POLL_SCHEDULE.next_delay(polls_done=200, elapsed_s=86400) is None


def test_connect_exchanges_the_code_and_reads_the_creator(fake):
    token = fake.post(f"{API}/oauth/token/").respond(
        200,
        json={
            "access_token": "act.NEW",
            "expires_in": 86400,
            "open_id": "open-1",
            "refresh_expires_in": 31536000,
            "refresh_token": "rft.NEW",
            "scope": "user.info.basic,video.publish,video.list",
            "token_type": "Bearer",
        },
    )
    adapter = TikTokAdapter()

    url = adapter.authorization_url(state="S", code_challenge="C", redirect_uri="https://app/cb")
    identity = adapter.complete_connect(
        code="CODE", code_verifier="", redirect_uri="https://app/cb"
    )

    assert url.startswith("https://www.tiktok.com/v2/auth/authorize/?")
    query = parse_qs(urlsplit(url).query)
    assert query["client_key"] == ["tt-key"]
    assert query["scope"] == ["user.info.basic,video.publish,video.list"]
    assert parse_qs(token.calls.last.request.content.decode()) == {
        "client_key": ["tt-key"],
        "client_secret": ["tt-secret"],
        "code": ["CODE"],
        "grant_type": ["authorization_code"],
        "redirect_uri": ["https://app/cb"],
    }
    assert identity.remote_id == "open-1"
    assert identity.handle == "baker"
    assert identity.credentials["refresh_token"] == "rft.NEW"
    assert identity.settings["privacy_level_options"] == CREATOR["privacy_level_options"]


def test_a_refused_code_asks_to_reconnect(fake):
    fake.post(f"{API}/oauth/token/").respond(
        400,
        json={
            "error": "invalid_grant",
            "error_description": "Authorization code is expired.",
            "log_id": "L",
        },
    )
    with pytest.raises(ProviderError) as err:
        TikTokAdapter().complete_connect(code="OLD", code_verifier="", redirect_uri="r")
    assert err.value.kind == ErrorKind.AUTH_EXPIRED
    assert err.value.code == "invalid_grant"


@pytest.mark.django_db
def test_a_refresh_returns_the_rotated_pair_and_leaves_storing_to_the_pipeline(fake, workspace_a):
    account = account_services.social_account_connect(
        workspace=workspace_a,
        platform="tiktok",
        remote_id="open-1",
        handle="baker",
        credentials={"access_token": "act.OLD", "refresh_token": "rft.OLD"},
        token_expires_at=datetime.now(UTC) + timedelta(minutes=3),
    )
    refresh = fake.post(f"{API}/oauth/token/").respond(
        200,
        json={
            "access_token": "act.NEW",
            "expires_in": 86400,
            "open_id": "open-1",
            "refresh_expires_in": 31536000,
            "refresh_token": "rft.NEW",
            "scope": "user.info.basic,video.publish",
            "token_type": "Bearer",
        },
    )

    fresh = TikTokAdapter().refresh_credentials(
        account, account_services.social_account_credentials(account)
    )

    form = parse_qs(refresh.calls.last.request.content.decode())
    assert form["grant_type"] == ["refresh_token"] and form["refresh_token"] == ["rft.OLD"]
    assert (fresh["access_token"], fresh["refresh_token"]) == ("act.NEW", "rft.NEW")
    assert datetime.fromisoformat(fresh["expires_at"]) > datetime.now(UTC) + timedelta(hours=23)
    account.refresh_from_db()
    assert account_services.social_account_credentials(account)["refresh_token"] == "rft.OLD"


def test_a_token_far_from_expiry_is_left_alone(fake):
    account = SocialAccount(
        platform="tiktok", token_expires_at=datetime.now(UTC) + timedelta(hours=5)
    )
    assert TikTokAdapter().refresh_credentials(account, {"refresh_token": "r"}) is None


def test_an_expired_refresh_token_asks_to_reconnect(fake):
    account = SocialAccount(platform="tiktok", token_expires_at=datetime.now(UTC))
    past = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    with pytest.raises(ProviderError) as err:
        TikTokAdapter().refresh_credentials(
            account, {"refresh_token": "r", "refresh_expires_at": past}
        )
    assert err.value.kind == ErrorKind.AUTH_EXPIRED

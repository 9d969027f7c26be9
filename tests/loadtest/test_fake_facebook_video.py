"""Facebook videos without a public URL, through the real adapter against the Facebook
fake over real HTTP: the Resumable Upload API (session, appends at the session's offset,
file handle, the Page's video from the handle), resumed after a dropped connection, started
over once when the session expired, looked up (not sent again) after an unanswered videos
call, and upload_phase when Meta refuses a Page token a session. The fake's own strictness
is checked by plain HTTP calls at the end."""

import copy
import io
import time

import httpx
import pytest
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers.base import MediaPayload, PublishContext, SegmentPayload, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.facebook import resumable
from loadtest.platform_fakes.facebook import FacebookFake
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.server import FakeServer

VIDEO_BYTES = b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 600  # about 150 kB
APP = "4321"


@pytest.fixture
def fake(settings):
    fake = FacebookFake(FaultPlan(rates={}, processing_s=0.6, hang_s=1.5, retry_after_s=60))
    fake.page_tokens_open_upload_sessions = True
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.75
    settings.META_APP_ID = APP
    settings.META_UPLOAD_ACCESS_TOKEN = ""
    settings.FACEBOOK_VIDEO_UPLOAD = "auto"
    fake.base_url = server.base_url
    yield fake
    server.stop()


@pytest.fixture
def page(fake):
    return fake.new_account("Bakery")


def _ctx(fake, page, *, checkpoint=None, saved=None):
    saved = [] if saved is None else saved
    return PublishContext(
        account=SocialAccount(platform="facebook", remote_id=page["remote_id"], handle="Bakery"),
        credentials=dict(page["credentials"]),
        settings={"title": "Dough"},
        rendition_id=1,
        idempotency_base="rendition-1",
        checkpoint=copy.deepcopy(checkpoint or {}),
        checkpoint_saver=lambda cp: saved.append((list(fake.calls), copy.deepcopy(cp))),
    )


def _video():
    return MediaPayload(
        media_id=1,
        kind="video",
        mime_type="video/mp4",
        size_bytes=len(VIDEO_BYTES),
        alt_text="",
        open=lambda: io.BytesIO(VIDEO_BYTES),
        public_url=None,
    )


SEGMENT = SegmentPayload(0, "Kneading", [_video()])


def _calls(fake, *suffixes):
    return [(m, p) for m, p in fake.calls if p.endswith(suffixes) or "/upload:" in p]


def _strike_once(fake, fault, times=1):
    """`fault` strikes the next `times` eligible calls, then never."""
    real, left = fake.faults.strikes, [times]

    def strikes(name):
        if name == fault and left[0]:
            left[0] -= 1
            return True
        return real(name)

    fake.faults.strikes = strikes


def _done(adapter, ctx, pending, *, limit_s=6.0):
    deadline = time.monotonic() + limit_s
    while pending.pending:
        assert time.monotonic() < deadline, "the video never became ready"
        time.sleep(0.1)
        pending = adapter.poll_segment(ctx, pending)
    return pending


def test_a_video_goes_up_by_the_resumable_upload_api_and_is_published_once(fake, page):
    adapter = get_adapter("facebook")
    saved = []
    ctx = _ctx(fake, page, saved=saved)

    pending = adapter.publish_segment(ctx, SEGMENT, reply_to=None)

    assert pending.pending
    page_id = page["remote_id"]
    sent = [
        (m, p.split(":")[0] if "upload:" in p else p)
        for m, p in _calls(fake, "/uploads", "/videos")
    ]
    assert sent == [
        ("POST", f"/v23.0/{APP}/uploads"),
        ("POST", "/v23.0/upload"),
        ("POST", f"/v23.0/{page_id}/videos"),
    ]
    # The session is kept before a byte moves, the handle before the videos call.
    entry = ctx.checkpoint["videos"]["0"]
    assert entry["protocol"] == "resumable" and entry["session"].startswith("upload:")
    before_bytes = next(cp for calls, cp in saved if cp["videos"]["0"].get("session"))
    assert not before_bytes["videos"]["0"].get("handle")
    before_video = next(cp for calls, cp in saved if cp["videos"]["0"].get("publish_sent"))
    assert before_video["videos"]["0"]["handle"] == entry["handle"]
    assert not before_video["videos"]["0"].get("video_id")
    [session] = fake.sessions.values()
    assert bytes(session.received) == VIDEO_BYTES
    done = _done(adapter, ctx, pending)
    [video] = fake.published()
    assert (video.id, video.text, video.extra["title"]) == (
        done.provider_post_id,
        "Kneading",
        "Dough",
    )
    assert entry["video_id"] == video.id


def test_the_first_comment_goes_under_the_published_video_and_is_found_again(fake, page):
    # A video post's id is the video's own (no Page prefix); its comments are on the same
    # edge as a feed post's (graph-api/reference/video/comments).
    adapter = get_adapter("facebook")
    ctx = _ctx(fake, page)
    video = _done(adapter, ctx, adapter.publish_segment(ctx, SEGMENT, reply_to=None))
    assert "_" not in video.provider_post_id
    for n in range(30):  # past the listing's default page of 25
        fake.add_comment(video.provider_post_id, "A viewer", f"Lovely {n}")

    made = adapter.publish_comment(ctx, video, "Recipe in the description", key="c-1")
    for n in range(30, 130):  # 100 newer: past three default pages, within three of 50
        fake.add_comment(video.provider_post_id, "A viewer", f"Lovely {n}")

    [ours] = [c for c in fake.comments.values() if c["from"]["id"] == page["remote_id"]]
    assert (ours["id"], ours["post"]) == (made.provider_post_id, video.provider_post_id)
    found = adapter.find_comment(ctx, video, "Recipe in the description", key="c-1")
    assert found is not None and found.provider_post_id == made.provider_post_id


def test_a_dropped_connection_resumes_from_the_offset_the_session_reports(fake, page):
    adapter = get_adapter("facebook")
    _strike_once(fake, "drop_mid_upload")
    ctx = _ctx(fake, page)

    pending = adapter.publish_segment(ctx, SEGMENT, reply_to=None)

    sent = [m for m, _ in _calls(fake, "/uploads")]
    assert sent == ["POST", "POST", "GET", "POST"]  # session, dropped append, offset, rest
    [session] = fake.sessions.values()
    assert bytes(session.received) == VIDEO_BYTES  # the rest from where it stood, once
    _done(adapter, ctx, pending)
    assert len(fake.published()) == 1


def test_an_attempt_resumes_the_session_of_the_attempt_before(fake, page, monkeypatch):
    adapter = get_adapter("facebook")
    monkeypatch.setattr(resumable, "CHUNK_BYTES", 64 * 1024)
    saved = []
    _strike_once(fake, "drop_mid_upload", times=1 + resumable.MAX_RESUMES)
    with pytest.raises(ProviderError) as dropped:
        adapter.publish_segment(_ctx(fake, page, saved=saved), SEGMENT, reply_to=None)
    assert dropped.value.kind == ErrorKind.NETWORK_BEFORE_SEND
    [session] = fake.sessions.values()
    held = len(session.received)
    assert 0 < held < len(VIDEO_BYTES)

    again = _ctx(fake, page, checkpoint=saved[-1][1])
    pending = adapter.publish_segment(again, SEGMENT, reply_to=None)

    assert len(fake.sessions) == 1  # the same session, not a second upload
    assert bytes(session.received) == VIDEO_BYTES
    _done(adapter, again, pending)
    assert len(fake.published()) == 1


def test_an_expired_session_starts_over_once(fake, page):
    adapter = get_adapter("facebook")
    saved = []
    _strike_once(fake, "drop_mid_upload", times=1 + resumable.MAX_RESUMES)
    with pytest.raises(ProviderError):
        adapter.publish_segment(_ctx(fake, page, saved=saved), SEGMENT, reply_to=None)
    fake.expire_sessions()  # lapsed before the next attempt

    again = _ctx(fake, page, checkpoint=saved[-1][1])
    pending = adapter.publish_segment(again, SEGMENT, reply_to=None)

    assert [p for m, p in fake.calls if p.endswith("/uploads")] == [f"/v23.0/{APP}/uploads"] * 2
    assert again.checkpoint["videos"]["0"]["session"] != saved[-1][1]["videos"]["0"]["session"]
    _done(adapter, again, pending)
    assert len(fake.published()) == 1


def test_sessions_that_expire_under_every_append_give_up_after_one_new_one(fake, page):
    adapter = get_adapter("facebook")
    fake.faults.rates["session_expires"] = 1.0

    with pytest.raises(ProviderError) as gone:
        adapter.publish_segment(_ctx(fake, page), SEGMENT, reply_to=None)

    assert (gone.value.kind, gone.value.code) == (
        ErrorKind.PROVIDER_UNAVAILABLE,
        "upload_session_gone",
    )
    assert len([p for _, p in fake.calls if p.endswith("/uploads")]) == 2
    assert fake.published() == []


def test_an_unanswered_videos_call_is_looked_up_not_sent_again(fake, page):
    adapter = get_adapter("facebook")
    saved = []
    fake.faults.processing_s = 3.0  # still processing when it is looked up
    fake.faults.rates["timeout_after_accept"] = 1.0
    with pytest.raises(ProviderError) as lost:
        adapter.publish_segment(_ctx(fake, page, saved=saved), SEGMENT, reply_to=None)
    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    fake.faults.rates.clear()
    [video] = fake.published()

    found = adapter.lookup_segment(
        _ctx(fake, page, checkpoint=saved[-1][1]), SEGMENT, not_before=timezone.now()
    )
    # A resend of the same attempt's checkpoint looks first, too.
    again = _ctx(fake, page, checkpoint=saved[-1][1])
    resumed = adapter.publish_segment(again, SEGMENT, reply_to=None)

    assert found.pending and found.provider_post_id == video.id
    assert resumed.pending and resumed.provider_post_id == video.id
    videos_posts = [p for m, p in fake.calls if m == "POST" and p.endswith("/videos")]
    assert len(videos_posts) == 1  # the handle was published once
    assert len(fake.sessions) == 1
    assert _done(adapter, again, resumed).provider_post_id == video.id
    assert len(fake.published()) == 1


def test_an_upload_that_never_reached_the_videos_call_is_not_found(fake, page):
    adapter = get_adapter("facebook")
    saved = []
    _strike_once(fake, "drop_mid_upload", times=1 + resumable.MAX_RESUMES)
    with pytest.raises(ProviderError):
        adapter.publish_segment(_ctx(fake, page, saved=saved), SEGMENT, reply_to=None)

    found = adapter.lookup_segment(
        _ctx(fake, page, checkpoint=saved[-1][1]), SEGMENT, not_before=timezone.now()
    )

    assert found is None
    assert not any(p.endswith("/videos") for _, p in fake.calls)


def test_a_page_token_refused_a_session_goes_up_by_upload_phase(fake, page):
    adapter = get_adapter("facebook")
    fake.page_tokens_open_upload_sessions = None  # as the soak has it: per account
    fake.switch(page["remote_id"], "upload_sessions_refused")
    ctx = _ctx(fake, page)

    pending = adapter.publish_segment(ctx, SEGMENT, reply_to=None)

    assert ("POST", f"/v23.0/{APP}/uploads") in fake.calls
    assert fake.sessions == {}
    assert ctx.checkpoint["videos"]["0"]["protocol"] == "upload_phase"
    _done(adapter, ctx, pending)
    assert len(fake.published()) == 1


def test_resumable_alone_does_not_fall_back(fake, page, settings):
    adapter = get_adapter("facebook")
    fake.page_tokens_open_upload_sessions = False
    settings.FACEBOOK_VIDEO_UPLOAD = "resumable"

    with pytest.raises(ProviderError) as refused:
        adapter.publish_segment(_ctx(fake, page), SEGMENT, reply_to=None)

    assert refused.value.kind == ErrorKind.PERMISSION_MISSING
    assert not any(p.endswith("/videos") for _, p in fake.calls)


def test_an_app_role_token_opens_the_session_and_the_page_token_publishes(fake, page, settings):
    adapter = get_adapter("facebook")
    fake.page_tokens_open_upload_sessions = False
    fake.app_user_tokens.add("operator-system-user")
    settings.META_UPLOAD_ACCESS_TOKEN = "operator-system-user"
    ctx = _ctx(fake, page)

    pending = adapter.publish_segment(ctx, SEGMENT, reply_to=None)

    [session] = fake.sessions.values()
    assert session.token == "operator-system-user"
    _done(adapter, ctx, pending)
    [video] = fake.published()
    assert video.account == page["remote_id"]


# --- the fake's own strictness ------------------------------------------------------------


def _session(fake, page, length=10):
    client = httpx.Client(base_url=f"{fake.base_url}/graph.facebook.com/v23.0")
    token = page["credentials"]["access_token"]
    opened = client.post(
        f"/{APP}/uploads",
        params={"file_name": "a.mp4", "file_length": length, "file_type": "video/mp4"},
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    return client, opened["id"], {"Authorization": f"OAuth {token}"}


def test_the_fake_refuses_a_wrong_offset_and_gives_the_handle_only_for_the_whole_file(fake, page):
    client, session, auth = _session(fake, page)

    wrong = client.post(f"/{session}", content=b"abcd", headers={**auth, "file_offset": "3"})
    no_header = client.post(
        f"/{session}", params={"file_offset": "0"}, content=b"abcd", headers=auth
    )
    part = client.post(f"/{session}", content=b"abcd", headers={**auth, "file_offset": "0"})
    offset = client.get(f"/{session}", headers=auth).json()
    rest = client.post(f"/{session}", content=b"efghij", headers={**auth, "file_offset": "4"})

    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == 100
    assert no_header.status_code == 400
    assert "h" not in part.json() and offset["file_offset"] == 4
    assert rest.json()["h"]


def test_the_fake_wants_the_token_in_the_header_and_forgets_expired_sessions(fake, page):
    client, session, auth = _session(fake, page)
    token = page["credentials"]["access_token"]

    in_query = client.get(f"/{session}", params={"access_token": token})
    fake.expire_sessions()
    expired = client.get(f"/{session}", headers=auth)
    handle_unknown = client.post(
        f"/{page['remote_id']}/videos",
        data={"fbuploader_video_file_chunk": "2:nothing"},
        headers={"Authorization": f"Bearer {token}"},
    )

    assert in_query.json()["error"]["code"] == 190
    assert (expired.json()["error"]["code"], expired.json()["error"]["error_subcode"]) == (100, 33)
    assert handle_unknown.json()["error"]["code"] == 100
    assert fake.published() == []


def test_a_video_with_a_public_url_is_uploaded_too_and_fetched_only_after_a_refusal(fake, page):
    adapter = get_adapter("facebook")
    public = MediaPayload(
        1,
        "video",
        "video/mp4",
        len(VIDEO_BYTES),
        "",
        lambda: io.BytesIO(VIDEO_BYTES),
        public_url="https://media.example.com/s/1.mp4",
    )
    ctx = _ctx(fake, page)
    pending = adapter.publish_segment(ctx, SegmentPayload(0, "Kneading", [public]), reply_to=None)
    assert ctx.checkpoint["videos"]["0"]["protocol"] == "resumable"

    fake.page_tokens_open_upload_sessions = False
    refused = _ctx(fake, page)
    fetched = adapter.publish_segment(
        refused, SegmentPayload(0, "Shaping", [public]), reply_to=None
    )

    assert refused.checkpoint["videos"]["0"]["protocol"] == "file_url"
    assert len(fake.sessions) == 1  # the second went by file_url, no session
    _done(adapter, ctx, pending)
    _done(adapter, refused, fetched)
    assert sorted(p.text for p in fake.published()) == ["Kneading", "Shaping"]


def test_an_unanswered_file_url_call_is_looked_up_not_sent_again(fake, page):
    adapter = get_adapter("facebook")
    fake.page_tokens_open_upload_sessions = False
    public = MediaPayload(
        1,
        "video",
        "video/mp4",
        len(VIDEO_BYTES),
        "",
        lambda: io.BytesIO(VIDEO_BYTES),
        public_url="https://media.example.com/s/1.mp4",
    )
    segment = SegmentPayload(0, "Kneading", [public])
    saved = []
    fake.faults.rates["timeout_after_accept"] = 1.0
    with pytest.raises(ProviderError) as lost:
        adapter.publish_segment(_ctx(fake, page, saved=saved), segment, reply_to=None)
    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    fake.faults.rates.clear()

    found = adapter.lookup_segment(
        _ctx(fake, page, checkpoint=saved[-1][1]), segment, not_before=timezone.now()
    )
    resumed = adapter.publish_segment(
        _ctx(fake, page, checkpoint=saved[-1][1]), segment, reply_to=None
    )

    [video] = fake.published()
    assert found.provider_post_id == video.id == resumed.provider_post_id
    assert len([p for m, p in fake.calls if m == "POST" and p.endswith("/videos")]) == 1

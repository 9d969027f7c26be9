"""The Bluesky adapter against a respx fake of the documented XRPC API."""

import base64
import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from apps.accounts.installation import installation_id
from apps.accounts.services import social_account_credentials
from apps.common import outbound
from apps.common.errors import ValidationFailed
from apps.providers.base import PublishedSegment, ReplyTarget, SegmentPayload
from apps.providers.bluesky.adapter import BlueskyAdapter
from apps.providers.bluesky.facets import build_facets
from apps.providers.bluesky.tid import S32, is_tid, segment_rkey
from apps.providers.errors import Action, ErrorKind, ProviderError
from tests.providers.social_helpers import body, go_offline, image, make_account, make_ctx

pytestmark = pytest.mark.django_db

PDS = "https://pds.example"
ENTRY = "https://bsky.social"
DID = "did:plc:alice123"
XRPC = f"{PDS}/xrpc"
VIDEO = "https://video.bsky.app/xrpc"


def _key(rendition_id: int, position: int) -> str:
    return segment_rkey(rendition_id, position, installation=installation_id())


def _jwt(exp: datetime) -> str:
    def part(data: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'ES256K'})}.{part({'exp': int(exp.timestamp())})}.sig"


def _session(access: str = "access-1", refresh: str = "refresh-1", exp: datetime | None = None):
    exp = exp or datetime.now(UTC) + timedelta(hours=2)
    return {
        "accessJwt": _jwt(exp) if access == "jwt" else access,
        "refreshJwt": refresh,
        "handle": "alice.example",
        "did": DID,
        "didDoc": {
            "id": DID,
            "service": [
                {"id": "#atproto_pds", "type": "AtprotoPersonalDataServer", "serviceEndpoint": PDS}
            ],
        },
    }


@pytest.fixture(autouse=True)
def waits(monkeypatch):
    return go_offline(monkeypatch)


@pytest.fixture
def account(workspace_a):
    return make_account(
        workspace_a,
        "bluesky",
        remote_id=DID,
        handle="alice.example",
        credentials={
            "access_jwt": "access-1",
            "refresh_jwt": "refresh-1",
            "did": DID,
            "pds": PDS,
            "expires_at": (datetime.now(UTC) + timedelta(hours=2)).isoformat(),
        },
        settings={"did": DID, "pds": PDS},
        token_expires_at=datetime.now(UTC) + timedelta(hours=2),
    )


def _created(rkey: str, cid: str = "bafy-created"):
    return {
        "uri": f"at://{DID}/app.bsky.feed.post/{rkey}",
        "cid": cid,
        "commit": {"cid": "bafy-commit", "rev": "3k"},
        "validationStatus": "valid",
    }


def test_record_keys_are_valid_tids_stable_per_segment_and_distinct():
    install = "0" * 32
    assert segment_rkey(7, 0, installation=install) == segment_rkey(7, 0, installation=install)
    keys = {segment_rkey(r, p, installation=install) for r in (1, 2, 7, 10**9) for p in (0, 1, 255)}
    assert len(keys) == 12
    assert all(is_tid(k) and len(k) == 13 for k in keys)
    with pytest.raises(ValueError):
        segment_rkey(7, 256, installation=install)
    with pytest.raises(ValueError):
        segment_rkey(2**32, 0, installation=install)


def test_record_keys_of_two_installations_differ_sort_and_are_never_in_the_future():
    a, b = "a" * 32, "b" * 32
    assert segment_rkey(7, 0, installation=a) != segment_rkey(7, 0, installation=b)
    ordered = [segment_rkey(r, p, installation=a) for r in (1, 2, 300) for p in (0, 1, 2)]
    assert ordered == sorted(ordered)
    latest = max(segment_rkey(2**32 - 1, 255, installation=f"{n:032x}") for n in range(200))
    timestamp = sum(S32.index(c) << (5 * i) for i, c in enumerate(reversed(latest[:11])))
    assert timestamp < datetime.now(UTC).timestamp() * 1_000_000


def test_facets_use_utf8_byte_offsets_for_links_mentions_and_tags():
    text = "Zażółć 🎉 @bob.example.com see https://example.com/a_(b)#frag, #Día1! #123"
    facets = build_facets(text, {"bob.example.com": "did:plc:bob"})
    raw = text.encode("utf-8")
    spans = [(raw[f["index"]["byteStart"] : f["index"]["byteEnd"]].decode(), f) for f in facets]
    assert [s for s, _ in spans] == [
        "@bob.example.com",
        "https://example.com/a_(b)#frag",
        "#Día1",
    ]
    # "Zażółć 🎉 " is 6 letters (4 of them two-byte), a space, a four-byte emoji, a space.
    assert facets[0]["index"] == {"byteStart": 16, "byteEnd": 32}
    assert spans[0][1]["features"] == [
        {"$type": "app.bsky.richtext.facet#mention", "did": "did:plc:bob"}
    ]
    assert spans[1][1]["features"] == [
        {"$type": "app.bsky.richtext.facet#link", "uri": "https://example.com/a_(b)#frag"}
    ]
    assert spans[2][1]["features"] == [{"$type": "app.bsky.richtext.facet#tag", "tag": "Día1"}]


def test_it_publishes_with_the_deterministic_rkey_and_facets(respx_mock, account):
    resolve = respx_mock.get(f"{XRPC}/com.atproto.identity.resolveHandle").respond(
        200, json={"did": "did:plc:bob"}
    )
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        200, json=_created(_key(7, 0))
    )
    text = "Cześć @bob.example.com 👋 #hello"
    published = BlueskyAdapter().publish_segment(
        make_ctx(account, settings={"language": "pl", "link_card": False}),
        SegmentPayload(0, text),
        reply_to=None,
    )
    assert resolve.calls.last.request.url.params["handle"] == "bob.example.com"
    request = create.calls.last.request
    assert request.headers["Authorization"] == "Bearer access-1"
    sent = body(request)
    assert sent["repo"] == DID
    assert sent["collection"] == "app.bsky.feed.post"
    assert sent["rkey"] == _key(7, 0)
    record = sent["record"]
    assert record["$type"] == "app.bsky.feed.post"
    assert record["text"] == text
    assert record["langs"] == ["pl"]
    assert record["createdAt"].endswith("Z")
    assert record["facets"] == [
        {
            "index": {"byteStart": 8, "byteEnd": 24},
            "features": [{"$type": "app.bsky.richtext.facet#mention", "did": "did:plc:bob"}],
        },
        {
            "index": {"byteStart": 30, "byteEnd": 36},
            "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": "hello"}],
        },
    ]
    assert "embed" not in record
    rkey = _key(7, 0)
    assert published.provider_post_id == f"at://{DID}/app.bsky.feed.post/{rkey}"
    assert published.provider_url == f"https://bsky.app/profile/{DID}/post/{rkey}"


def test_an_unresolvable_mention_stays_plain_text(respx_mock, account):
    respx_mock.get(f"{XRPC}/com.atproto.identity.resolveHandle").respond(
        400, json={"error": "InvalidRequest", "message": "Unable to resolve handle"}
    )
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        200, json=_created(_key(7, 0))
    )
    BlueskyAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "hi @ghost.example"), reply_to=None
    )
    assert "facets" not in body(create.calls.last.request)["record"]


def test_images_are_uploaded_as_blobs_with_alt_text_and_aspect_ratio(respx_mock, account):
    blob = {"$type": "blob", "ref": {"$link": "bafkblob"}, "mimeType": "image/png", "size": 10}
    upload = respx_mock.post(f"{XRPC}/com.atproto.repo.uploadBlob").respond(
        200, json={"blob": blob}
    )
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        200, json=_created(_key(7, 0))
    )
    BlueskyAdapter().publish_segment(
        make_ctx(account),
        SegmentPayload(0, "pic https://example.com", [image(width=1200, height=800)]),
        reply_to=None,
    )
    request = upload.calls.last.request
    assert request.content == b"\x89PNG fake"
    assert request.headers["Content-Type"] == "image/png"
    assert body(create.calls.last.request)["record"]["embed"] == {
        "$type": "app.bsky.embed.images",
        "images": [
            {"image": blob, "alt": "A red square", "aspectRatio": {"width": 1200, "height": 800}}
        ],
    }


@pytest.mark.parametrize(
    ("langs", "expected"),
    [
        ("en", ["en"]),
        ("en,de", ["en", "de"]),
        ("en de, fr; pt-BR", ["en", "de", "fr"]),
        (
            ["pt-BR", "not a tag", "PT-br", "es-419", 7, "zh-Hant", "fr"],
            ["pt-BR", "es-419", "zh-Hant"],
        ),
        ("", None),
        ("??", None),
    ],
)
def test_langs_take_a_list_or_a_separated_string_and_keep_three_valid_tags(
    respx_mock, account, langs, expected
):
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        200, json=_created(_key(7, 0))
    )
    BlueskyAdapter().publish_segment(
        make_ctx(account, settings={"langs": langs}), SegmentPayload(0, "hi"), reply_to=None
    )
    assert body(create.calls.last.request)["record"].get("langs") == expected


def _clip(kind: str = "video", mime: str = "video/mp4"):
    return image(alt="A clip", data=b"clip bytes", kind=kind, mime=mime, width=720, height=1280)


def _video_service(respx_mock, *, upload: dict, status: dict | None = None):
    """The PDS's service auth and the video service's limits, upload and job status."""
    auth = respx_mock.get(f"{XRPC}/com.atproto.server.getServiceAuth").mock(
        side_effect=lambda request: httpx.Response(
            200, json={"token": f"svc-{request.url.params['lxm']}"}
        )
    )
    limits = respx_mock.get(f"{VIDEO}/app.bsky.video.getUploadLimits").respond(
        200, json={"canUpload": True, "remainingDailyVideos": 25, "remainingDailyBytes": 10**10}
    )
    uploaded = respx_mock.post(f"{VIDEO}/app.bsky.video.uploadVideo").respond(200, json=upload)
    polled = respx_mock.get(f"{VIDEO}/app.bsky.video.getJobStatus").respond(
        200, json={"jobStatus": status or {}}
    )
    return auth, limits, uploaded, polled


def test_a_video_goes_to_the_video_service_with_service_auth_then_posts_when_done(
    respx_mock, account
):
    blob = {"$type": "blob", "ref": {"$link": "bafkvid"}, "mimeType": "video/mp4", "size": 10}
    auth, limits, uploaded, polled = _video_service(
        respx_mock,
        upload={"jobStatus": {"jobId": "job-1", "did": DID, "state": "JOB_STATE_CREATED"}},
        status={"jobId": "job-1", "did": DID, "state": "JOB_STATE_ENCODING", "progress": 40},
    )
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        200, json=_created(_key(7, 0))
    )
    adapter = BlueskyAdapter()
    ctx = make_ctx(account, settings={"langs": "en"})

    pending = adapter.publish_segment(ctx, SegmentPayload(0, "watch", [_clip()]), reply_to=None)
    still = adapter.poll_segment(ctx, pending)
    polled.respond(
        200,
        json={
            "jobStatus": {
                "jobId": "job-1",
                "did": DID,
                "state": "JOB_STATE_COMPLETED",
                "blob": blob,
            }
        },
    )
    published = adapter.poll_segment(ctx, pending)

    assert pending.pending and still.pending and not published.pending
    limits_auth, upload_auth = (
        dict(c.request.url.params)
        for c in sorted(auth.calls, key=lambda c: c.request.url.params["lxm"])
    )
    assert upload_auth["aud"] == "did:web:pds.example"  # the PDS stores the blob
    assert upload_auth["lxm"] == "com.atproto.repo.uploadBlob"
    assert limits_auth["aud"] == "did:web:video.bsky.app"
    assert (
        limits.calls.last.request.headers["Authorization"]
        == "Bearer svc-app.bsky.video.getUploadLimits"
    )
    request = uploaded.calls.last.request
    assert request.headers["Authorization"] == "Bearer svc-com.atproto.repo.uploadBlob"
    assert request.headers["Content-Type"] == "video/mp4"
    assert dict(request.url.params) == {"did": DID, "name": "1.mp4"}
    assert request.content == b"clip bytes"
    assert polled.calls.last.request.url.params["jobId"] == "job-1"
    assert uploaded.call_count == 1
    sent = body(create.calls.last.request)
    assert sent["rkey"] == _key(7, 0)
    assert sent["record"]["text"] == "watch"
    assert sent["record"]["langs"] == ["en"]
    assert sent["record"]["embed"] == {
        "$type": "app.bsky.embed.video",
        "video": blob,
        "alt": "A clip",
        "aspectRatio": {"width": 720, "height": 1280},
    }


def test_an_animated_gif_is_sent_to_the_video_service_not_uploaded_as_an_image(respx_mock, account):
    _, _, uploaded, _ = _video_service(
        respx_mock, upload={"jobId": "job-gif", "did": DID, "state": "JOB_STATE_CREATED"}
    )
    blob_upload = respx_mock.post(f"{XRPC}/com.atproto.repo.uploadBlob")
    pending = BlueskyAdapter().publish_segment(
        make_ctx(account),
        SegmentPayload(0, "gif", [_clip(kind="gif", mime="image/gif")]),
        reply_to=None,
    )
    assert pending.pending is True
    assert uploaded.calls.last.request.headers["Content-Type"] == "image/gif"
    assert uploaded.calls.last.request.url.params["name"] == "1.gif"
    assert blob_upload.call_count == 0


def test_a_video_beside_images_is_refused_before_anything_is_sent(account):
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().publish_segment(
            make_ctx(account), SegmentPayload(0, "v", [_clip(), image()]), reply_to=None
        )
    assert err.value.code == "video_not_alone"
    assert err.value.kind == ErrorKind.CONTENT_REJECTED


def test_a_spent_daily_video_allowance_is_a_rate_limit_and_nothing_is_uploaded(respx_mock, account):
    _, limits, uploaded, _ = _video_service(respx_mock, upload={})
    limits.respond(
        200, json={"canUpload": True, "remainingDailyVideos": 0, "remainingDailyBytes": 0}
    )
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().publish_segment(
            make_ctx(account), SegmentPayload(0, "v", [_clip()]), reply_to=None
        )
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.code == "video_daily_limit"
    assert uploaded.call_count == 0


@pytest.mark.parametrize(
    ("status", "error"), [(400, "RecordAlreadyExists"), (409, "Conflict"), (400, "DuplicateRecord")]
)
def test_the_named_record_exists_error_is_settled_by_get_record(respx_mock, account, status, error):
    rkey = _key(7, 0)
    respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        status, json={"error": error, "message": "Record already exists"}
    )
    respx_mock.get(f"{XRPC}/com.atproto.repo.getRecord").respond(
        200,
        json={
            "uri": f"at://{DID}/app.bsky.feed.post/{rkey}",
            "cid": "c",
            "value": {"text": "once"},
        },
    )
    published = BlueskyAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "once"), reply_to=None
    )
    assert published.provider_post_id == f"at://{DID}/app.bsky.feed.post/{rkey}"


def test_a_link_gets_a_card_from_the_page(respx_mock, account):
    page = (
        '<html><head><meta property="og:title" content="Example &amp; Co">'
        '<meta property="og:description" content="A page">'
        '<meta property="og:image" content="/card.png"></head></html>'
    )
    respx_mock.get("https://example.com/post").respond(
        200, text=page, headers={"Content-Type": "text/html; charset=utf-8"}
    )
    respx_mock.get("https://example.com/card.png").respond(
        200, content=b"PNG", headers={"Content-Type": "image/png"}
    )
    thumb = {"$type": "blob", "ref": {"$link": "bafkthumb"}, "mimeType": "image/png", "size": 3}
    upload = respx_mock.post(f"{XRPC}/com.atproto.repo.uploadBlob").respond(
        200, json={"blob": thumb}
    )
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        200, json=_created(_key(7, 0))
    )
    BlueskyAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "read https://example.com/post."), reply_to=None
    )
    assert upload.calls.last.request.content == b"PNG"
    assert body(create.calls.last.request)["record"]["embed"] == {
        "$type": "app.bsky.embed.external",
        "external": {
            "uri": "https://example.com/post",
            "title": "Example & Co",
            "description": "A page",
            "thumb": thumb,
        },
    }


def test_a_page_that_cannot_be_read_leaves_the_post_without_a_card(respx_mock, account):
    respx_mock.get("https://example.com/gone").respond(404)
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        200, json=_created(_key(7, 0))
    )
    BlueskyAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "https://example.com/gone"), reply_to=None
    )
    assert "embed" not in body(create.calls.last.request)["record"]


def test_a_thread_reply_carries_root_and_parent_strong_refs(respx_mock, account):
    root_rkey, parent_rkey = _key(7, 0), _key(7, 1)
    records = {
        root_rkey: {"uri": f"at://{DID}/app.bsky.feed.post/{root_rkey}", "cid": "cid-root"},
        parent_rkey: {"uri": f"at://{DID}/app.bsky.feed.post/{parent_rkey}", "cid": "cid-parent"},
    }

    def get_record(request):
        return httpx.Response(200, json={**records[request.url.params["rkey"]], "value": {}})

    respx_mock.get(f"{XRPC}/com.atproto.repo.getRecord").mock(side_effect=get_record)
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        200, json=_created(_key(7, 2))
    )
    root = PublishedSegment(records[root_rkey]["uri"])
    parent = PublishedSegment(records[parent_rkey]["uri"])
    BlueskyAdapter().publish_segment(
        make_ctx(account), SegmentPayload(2, "3/3"), reply_to=ReplyTarget(root=root, parent=parent)
    )
    sent = body(create.calls.last.request)
    assert sent["rkey"] == _key(7, 2)
    assert sent["record"]["reply"] == {
        "root": {"uri": records[root_rkey]["uri"], "cid": "cid-root"},
        "parent": {"uri": records[parent_rkey]["uri"], "cid": "cid-parent"},
    }


def test_a_duplicate_rkey_500_is_settled_by_get_record(respx_mock, account):
    rkey = _key(7, 0)
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        500, json={"error": "InternalServerError", "message": "Internal Server Error"}
    )
    get = respx_mock.get(f"{XRPC}/com.atproto.repo.getRecord").respond(
        200,
        json={
            "uri": f"at://{DID}/app.bsky.feed.post/{rkey}",
            "cid": "bafy1",
            "value": {"text": "once", "createdAt": "2026-12-02T10:00:00.000Z"},
        },
    )
    published = BlueskyAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "once"), reply_to=None
    )
    assert body(create.calls.last.request)["rkey"] == rkey
    assert dict(get.calls.last.request.url.params) == {
        "repo": DID,
        "collection": "app.bsky.feed.post",
        "rkey": rkey,
    }
    assert published.provider_post_id == f"at://{DID}/app.bsky.feed.post/{rkey}"
    assert published.published_at == datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


def test_a_5xx_with_nothing_under_the_key_is_a_retryable_outage(respx_mock, account):
    respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        502, json={"error": "UpstreamFailure", "message": "Upstream Failure"}
    )
    respx_mock.get(f"{XRPC}/com.atproto.repo.getRecord").respond(
        400, json={"error": "RecordNotFound", "message": "Could not locate record: at://..."}
    )
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE
    assert err.value.retryable is True
    assert err.value.code == "UpstreamFailure"


def test_a_lost_answer_then_a_resend_uses_the_same_rkey(respx_mock, account):
    rkey = _key(7, 3)
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").mock(
        side_effect=[httpx.ReadTimeout("lost"), httpx.Response(200, json=_created(rkey))]
    )
    respx_mock.get(f"{XRPC}/com.atproto.repo.getRecord").respond(
        400, json={"error": "RecordNotFound", "message": "Could not locate record"}
    )
    adapter = BlueskyAdapter()
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(make_ctx(account), SegmentPayload(3, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert adapter.is_retry_safe(account) is True
    adapter.publish_segment(make_ctx(account), SegmentPayload(3, "x"), reply_to=None)
    assert [body(c.request)["rkey"] for c in create.calls] == [rkey, rkey]


def test_lookup_is_get_record_by_the_segment_key(respx_mock, account):
    rkey = _key(7, 0)
    route = respx_mock.get(f"{XRPC}/com.atproto.repo.getRecord")
    route.respond(400, json={"error": "RecordNotFound", "message": "Could not locate record"})
    ctx = make_ctx(account)
    not_before = datetime.now(UTC)
    assert (
        BlueskyAdapter().lookup_segment(ctx, SegmentPayload(0, "x"), not_before=not_before) is None
    )
    route.respond(
        200,
        json={"uri": f"at://{DID}/app.bsky.feed.post/{rkey}", "cid": "c", "value": {"text": "y"}},
    )
    # A record under the key with other text is not ours.
    assert (
        BlueskyAdapter().lookup_segment(ctx, SegmentPayload(0, "x"), not_before=not_before) is None
    )
    route.respond(
        200,
        json={"uri": f"at://{DID}/app.bsky.feed.post/{rkey}", "cid": "c", "value": {"text": "x"}},
    )
    found = BlueskyAdapter().lookup_segment(ctx, SegmentPayload(0, "x"), not_before=not_before)
    assert found.provider_post_id == f"at://{DID}/app.bsky.feed.post/{rkey}"
    assert route.calls.last.request.url.params["rkey"] == rkey


@pytest.mark.parametrize(
    ("status", "error", "kind", "action"),
    [
        (400, "InvalidToken", ErrorKind.AUTH_EXPIRED, Action.RECONNECT),
        (401, "AuthMissing", ErrorKind.AUTH_EXPIRED, Action.RECONNECT),
        (403, "Forbidden", ErrorKind.PERMISSION_MISSING, Action.RECONNECT),
        (400, "InvalidRequest", ErrorKind.CONTENT_REJECTED, Action.EDIT),
    ],
)
def test_documented_errors_are_classified(respx_mock, account, status, error, kind, action):
    respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        status, json={"error": error, "message": "Invalid app.bsky.feed.post record: too long"}
    )
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == kind
    assert err.value.code == error
    assert err.value.http_status == status
    assert err.value.action == action
    assert err.value.retryable is False


def test_rate_limit_honours_the_epoch_reset_header(respx_mock, account):
    respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        429,
        json={"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"},
        headers={
            "RateLimit-Limit": "5000",
            "RateLimit-Remaining": "0",
            "RateLimit-Reset": "1796220000",
            "RateLimit-Policy": "5000;w=3600",
        },
    )
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retryable is True
    assert err.value.retry_at == datetime.fromtimestamp(1796220000, tz=UTC)


def test_an_expired_access_jwt_is_refreshed_stored_and_the_call_repeated(respx_mock, account):
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").mock(
        side_effect=[
            httpx.Response(400, json={"error": "ExpiredToken", "message": "Token has expired"}),
            httpx.Response(200, json=_created(_key(7, 0))),
        ]
    )
    refresh = respx_mock.post(f"{XRPC}/com.atproto.server.refreshSession").respond(
        200, json=_session(access="jwt", refresh="refresh-2")
    )
    ctx = make_ctx(account)
    BlueskyAdapter().publish_segment(ctx, SegmentPayload(0, "x"), reply_to=None)
    assert refresh.calls.last.request.headers["Authorization"] == "Bearer refresh-1"
    assert (
        create.calls[1].request.headers["Authorization"]
        == f"Bearer {ctx.credentials['access_jwt']}"
    )
    account.refresh_from_db()
    stored = social_account_credentials(account)
    assert stored["refresh_jwt"] == "refresh-2"  # the rotated token survives the process
    assert account.token_expires_at > datetime.now(UTC) + timedelta(minutes=100)


def test_refresh_only_near_expiry(respx_mock, account):
    adapter = BlueskyAdapter()
    credentials = social_account_credentials(account)
    assert adapter.refresh_credentials(account, credentials) is None
    credentials["expires_at"] = (datetime.now(UTC) + timedelta(minutes=2)).isoformat()
    respx_mock.post(f"{XRPC}/com.atproto.server.refreshSession").respond(
        200, json=_session(access="jwt", refresh="refresh-9")
    )
    fresh = adapter.refresh_credentials(account, credentials)
    assert fresh["refresh_jwt"] == "refresh-9"
    assert fresh["pds"] == PDS
    assert datetime.fromisoformat(fresh["expires_at"]) > datetime.now(UTC) + timedelta(minutes=100)


def test_a_revoked_refresh_token_asks_to_reconnect(respx_mock, account):
    respx_mock.post(f"{XRPC}/com.atproto.server.refreshSession").respond(
        400, json={"error": "ExpiredToken", "message": "Token has been revoked"}
    )
    credentials = social_account_credentials(account)
    credentials["expires_at"] = datetime.now(UTC).isoformat()
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().refresh_credentials(account, credentials)
    assert err.value.kind == ErrorKind.AUTH_EXPIRED
    assert err.value.action == Action.RECONNECT


def test_connect_with_an_app_password_creates_a_session_on_the_accounts_pds(respx_mock):
    create = respx_mock.post(f"{ENTRY}/xrpc/com.atproto.server.createSession").respond(
        200, json=_session(access="jwt")
    )
    identity = BlueskyAdapter().connect_with_password(
        identifier="@alice.example", password="abcd-efgh-ijkl-mnop"
    )
    assert body(create.calls.last.request) == {
        "identifier": "alice.example",
        "password": "abcd-efgh-ijkl-mnop",
    }
    assert identity.remote_id == DID
    assert identity.handle == "alice.example"
    assert identity.settings == {"did": DID, "pds": PDS}
    assert identity.credentials["refresh_jwt"] == "refresh-1"
    assert identity.credentials["pds"] == PDS
    assert identity.token_expires_at > datetime.now(UTC) + timedelta(minutes=100)


def test_a_wrong_app_password_is_refused(respx_mock):
    respx_mock.post(f"{ENTRY}/xrpc/com.atproto.server.createSession").respond(
        401, json={"error": "AuthenticationRequired", "message": "Invalid identifier or password"}
    )
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().connect_with_password(identifier="alice.example", password="nope")
    assert err.value.kind == ErrorKind.AUTH_EXPIRED
    assert "app password" in err.value.message


def test_a_pds_on_a_private_address_is_refused(respx_mock, monkeypatch):
    session = _session()
    session["didDoc"]["service"][0]["serviceEndpoint"] = "https://internal.example"
    respx_mock.post(f"{ENTRY}/xrpc/com.atproto.server.createSession").respond(200, json=session)
    monkeypatch.setattr(
        outbound,
        "resolve",
        lambda host, port: ["127.0.0.1"] if host == "internal.example" else ["93.184.216.34"],
    )
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().connect_with_password(identifier="alice.example", password="p")
    assert err.value.code == "unsafe_pds"


def test_a_non_https_service_is_refused():
    with pytest.raises(ValidationFailed):
        BlueskyAdapter().connect_with_password(
            identifier="a", password="p", service="http://pds.example"
        )


def test_a_link_to_a_private_address_gets_no_card_and_is_never_fetched(
    respx_mock, account, monkeypatch
):
    monkeypatch.setattr(outbound, "resolve", lambda host, port: ["10.0.0.8"])
    page = respx_mock.get("https://intranet.example/admin").respond(200, text="<title>x</title>")
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        200, json=_created(_key(7, 0))
    )
    BlueskyAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "https://intranet.example/admin"), reply_to=None
    )
    assert page.call_count == 0
    record = body(create.calls.last.request)["record"]
    assert "embed" not in record
    assert record["facets"][0]["features"][0]["uri"] == "https://intranet.example/admin"

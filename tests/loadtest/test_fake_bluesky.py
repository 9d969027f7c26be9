"""The real Bluesky adapter against the Bluesky PDS fake, served over HTTP."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from apps.accounts import services as account_services
from apps.accounts.installation import installation_id
from apps.accounts.models import Installation
from apps.providers.base import PublishContext, ReplyTarget, SegmentPayload, get_adapter
from apps.providers.bluesky.adapter import VIDEO_JOB
from apps.providers.bluesky.tid import is_tid, legacy_segment_rkey, segment_rkey
from apps.providers.errors import ErrorKind, ProviderError
from apps.publishing.delivery.context import publish_context, store_refreshed_credentials
from apps.renditions.models import DeliveryAttempt
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.bluesky import FAKE, NAMED_ERROR, SLOW_FACTOR, BlueskyFake
from loadtest.platform_fakes.server import FakeServer
from tests.factories import RenditionFactory
from tests.providers.social_helpers import image, make_account

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_installation_cache():
    installation_id.cache_clear()
    yield
    installation_id.cache_clear()


@pytest.fixture
def fake():
    return BlueskyFake(FaultPlan(hang_s=1.0))


@pytest.fixture
def server(fake, settings):
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.5
    yield server
    server.stop()


@pytest.fixture
def opened(fake):
    return fake.new_account("alice")


@pytest.fixture
def account(workspace_a, opened, server):
    return make_account(workspace_a, "bluesky", **opened)


def _ctx(
    account, rendition_id: int = 41, *, checkpoint=None, saved=None, saver=None
) -> PublishContext:
    """A context shaped like the pipeline's: stable idempotency base, persisted checkpoint."""
    saved = [] if saved is None else saved
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={"langs": ["en"]},
        rendition_id=rendition_id,
        idempotency_base=f"rendition-{rendition_id}",
        checkpoint=dict(checkpoint or {}),
        checkpoint_saver=saver or saved.append,
        # As the pipeline does: refreshed credentials are stored by the pipeline alone.
        credentials_saver=lambda fresh: store_refreshed_credentials(account, fresh),
    )


def _clip(data: bytes = b"\x00\x00\x00\x18ftypmp42 a short clip"):
    return image(
        alt="A short clip", data=data, kind="video", mime="video/mp4", width=1920, height=1080
    )


def _after_processing(fake) -> None:
    """Move the fake's clock past the video service's processing time."""
    now = fake.clock()
    fake.clock = lambda: now + fake.faults.processing_s * SLOW_FACTOR + 1


def _publish(ctx, text: str, *, position: int = 0, media=(), reply_to=None):
    return get_adapter("bluesky").publish_segment(
        ctx, SegmentPayload(position, text, list(media)), reply_to=reply_to
    )


def _reset_installation() -> str:
    """What a database reset does: a new installation row, hence a new id."""
    Installation.objects.all().delete()
    installation_id.cache_clear()
    return installation_id()


def test_the_module_names_its_fake_and_sample_content_carries_the_marker():
    assert FAKE is BlueskyFake
    content = BlueskyFake().sample_content(random.Random(3), "B-17")
    assert "B-17" in content["segments"][0]["text"]


def test_a_text_post_is_created_under_the_key_persisted_before_sending(fake, account, opened):
    saved: list[dict] = []
    ctx = _ctx(account, saved=saved)

    published = _publish(ctx, "Hello from the fake")

    [post] = fake.published()
    rkey = fake.rkey_of(post)
    assert post.text == "Hello from the fake"
    assert is_tid(rkey)
    assert rkey == segment_rkey(41, 0, installation=installation_id())
    assert saved[0] == {"rkeys": {"0": rkey}}  # written before the create left
    assert published.provider_post_id == post.id
    assert published.provider_url == f"https://bsky.app/profile/{opened['remote_id']}/post/{rkey}"


def test_a_thread_carries_root_and_parent_strong_refs(fake, account):
    ctx = _ctx(account)
    root = _publish(ctx, "one")
    second = _publish(ctx, "two", position=1, reply_to=ReplyTarget(root, root))
    _publish(ctx, "three", position=2, reply_to=ReplyTarget(root, second))

    posts = {p.text: p for p in fake.published()}
    reply = posts["three"].extra["record"]["reply"]
    assert reply["root"] == {"uri": root.provider_post_id, "cid": posts["one"].extra["cid"]}
    assert reply["parent"] == {"uri": second.provider_post_id, "cid": posts["two"].extra["cid"]}
    assert set(ctx.checkpoint["rkeys"]) == {"0", "1", "2"}


def test_an_image_is_uploaded_as_a_blob_and_embedded_with_alt_text(fake, account):
    _publish(_ctx(account), "a picture", media=[image(alt="A red square")])

    [post] = fake.published()
    [embedded] = post.extra["record"]["embed"]["images"]
    assert embedded["alt"] == "A red square"
    assert embedded["image"]["ref"]["$link"] in fake.blobs


@pytest.mark.parametrize("existing_error", ["InternalServerError", NAMED_ERROR])
def test_a_timeout_after_accept_then_a_resend_gives_one_post(fake, account, existing_error):
    fake.existing_record_error = existing_error
    ctx = _ctx(account)
    fake.faults.rates["timeout_after_accept"] = 1.0

    # The lost answer is settled at once: getRecord finds our text under our key.
    first = _publish(ctx, "once only")
    fake.faults.rates.clear()
    # A later attempt (a recovered job) sends the same key again.
    again = _publish(ctx, "once only")

    [post] = fake.published()
    assert first.provider_post_id == again.provider_post_id == post.id


def test_a_5xx_after_the_write_is_settled_as_published(fake, account):
    fake.faults.rates["server_error_after"] = 1.0

    published = _publish(_ctx(account), "stored then 500")

    [post] = fake.published()
    assert published.provider_post_id == post.id


def test_a_429_carries_the_epoch_reset_and_stores_nothing(fake, account):
    fake.faults.rates["rate_limit"] = 1.0
    fake.faults.retry_after_s = 90

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "too fast")

    err = caught.value
    assert err.kind == ErrorKind.RATE_LIMITED and err.http_status == 429
    assert abs((err.retry_at - datetime.now(UTC)).total_seconds() - 90) < 2
    assert fake.published() == []


def test_a_stale_access_jwt_is_refreshed_stored_and_the_post_sent_once(fake, account):
    old_refresh = account_services.social_account_credentials(account)["refresh_jwt"]
    clock = fake.clock()
    fake.clock = lambda: clock + 3 * 3600  # the access JWT lives two hours

    _publish(_ctx(account), "after a refresh")

    assert len(fake.published()) == 1
    stored = account_services.social_account_credentials(account)
    assert stored["refresh_jwt"] != old_refresh
    assert fake.sessions[old_refresh]["revoked"] is True


def test_a_reset_installation_derives_other_keys_and_never_finds_the_old_post(fake, account):
    first = installation_id()
    _publish(_ctx(account), "posted by the first installation")
    [old_post] = fake.published()

    second = _reset_installation()
    assert second != first
    assert segment_rkey(41, 0, installation=first) != segment_rkey(41, 0, installation=second)
    ctx = _ctx(account)  # the same rendition id, after the reset
    segment = SegmentPayload(0, "posted by the second installation")

    assert get_adapter("bluesky").lookup_segment(ctx, segment, not_before=datetime.now(UTC)) is None
    published = _publish(ctx, segment.text)

    assert published.provider_post_id != old_post.id
    assert len(fake.published()) == 2


def test_a_key_held_by_another_post_is_never_called_ours_and_is_replaced(fake, account):
    _publish(_ctx(account), "someone else's post")
    [foreign] = fake.published()
    taken = fake.rkey_of(foreign)
    # A rendition whose key another post already holds (an older derivation, a reset).
    saved: list[dict] = []
    ctx = _ctx(account, checkpoint={"rkeys": {"0": taken}}, saved=saved)
    segment = SegmentPayload(0, "our post")

    assert get_adapter("bluesky").lookup_segment(ctx, segment, not_before=datetime.now(UTC)) is None
    published = _publish(ctx, segment.text)

    ours = next(p for p in fake.published() if p.text == "our post")
    assert published.provider_post_id == ours.id != foreign.id
    assert ctx.checkpoint["rkeys"]["0"] == fake.rkey_of(ours) != taken
    assert saved[-1]["rkeys"]["0"] == fake.rkey_of(ours)  # kept before the second create


def test_a_checkpointed_key_is_reused_whatever_the_derivation_says(fake, account):
    kept = segment_rkey(41, 0, installation="an-earlier-derivation")
    ctx = _ctx(account, checkpoint={"rkeys": {"0": kept}})

    _publish(ctx, "in flight across an upgrade")

    [post] = fake.published()
    assert fake.rkey_of(post) == kept


def test_connect_with_an_app_password_uses_the_pds_from_the_did_document(fake, opened, server):
    password = fake.accounts[opened["remote_id"]]["password"]

    identity = get_adapter("bluesky").connect_with_password(
        identifier=opened["handle"], password=password, service=None
    )

    assert identity.remote_id == opened["remote_id"]
    assert identity.settings["pds"] == opened["settings"]["pds"]
    assert identity.credentials["access_jwt"] in fake.sessions


# --- video and GIFs through the video service ---------------------------------------------


def test_a_video_is_uploaded_to_the_video_service_and_posted_once_processed(fake, account):
    adapter = get_adapter("bluesky")
    saved: list[dict] = []
    ctx = _ctx(account, saved=saved)
    now = fake.clock()
    fake.clock = lambda: now  # the job is still encoding at the first poll

    pending = _publish(ctx, "a clip", media=[_clip()])

    [job_id] = fake.video_uploads
    assert pending.pending is True
    assert pending.provider_post_id == f"{VIDEO_JOB}{job_id}"
    assert saved[-1]["videos"]["0"]["job_id"] == job_id  # kept before answering pending
    assert fake.published() == []
    assert adapter.poll_segment(ctx, pending).pending is True  # still encoding

    _after_processing(fake)
    published = adapter.poll_segment(ctx, pending)

    [post] = fake.published()
    assert published.provider_post_id == post.id
    assert fake.rkey_of(post) == ctx.checkpoint["rkeys"]["0"]
    embed = post.extra["record"]["embed"]
    assert embed["$type"] == "app.bsky.embed.video"
    assert embed["video"] == fake.video_jobs[job_id]["blob"]
    assert embed["alt"] == "A short clip"
    assert embed["aspectRatio"] == {"width": 1920, "height": 1080}
    assert post.extra["record"]["langs"] == ["en"]


class _Killed(Exception):
    """The worker process died."""


def test_a_worker_killed_after_the_upload_was_accepted_resumes_the_same_job(fake, account):
    adapter = get_adapter("bluesky")
    saved: list[dict] = []

    def saver(checkpoint: dict) -> None:
        saved.append(checkpoint)
        if (checkpoint.get("videos") or {}).get("0"):
            raise _Killed  # right after the job id reached the database

    with pytest.raises(_Killed):
        _publish(_ctx(account, saver=saver), "a clip", media=[_clip()])
    [job_id] = fake.video_uploads

    # The next run starts from what the database holds.
    ctx = _ctx(account, checkpoint=saved[-1])
    segment = SegmentPayload(0, "a clip", [_clip()])
    found = adapter.lookup_segment(ctx, segment, not_before=datetime.now(UTC))
    again = _publish(ctx, "a clip", media=[_clip()])
    _after_processing(fake)
    published = adapter.poll_segment(ctx, again)

    assert found.pending is True and found.provider_post_id == f"{VIDEO_JOB}{job_id}"
    assert again.pending is True and again.provider_post_id == f"{VIDEO_JOB}{job_id}"
    assert fake.video_uploads == [job_id]  # never uploaded a second time
    assert [call for call in fake.calls if "uploadVideo" in call[1]] == [
        ("POST", "/xrpc/app.bsky.video.uploadVideo")
    ]
    [post] = fake.published()
    assert published.provider_post_id == post.id


def test_a_failed_processing_job_is_reported_and_a_retry_uploads_again(fake, account):
    adapter = get_adapter("bluesky")
    fake.faults.rates["processing_fails"] = 1.0
    ctx = _ctx(account)
    pending = _publish(ctx, "a clip", media=[_clip()])
    _after_processing(fake)

    with pytest.raises(ProviderError) as caught:
        adapter.poll_segment(ctx, pending)

    assert caught.value.kind == ErrorKind.CONTENT_REJECTED
    assert caught.value.code == "encoding_failure"
    assert "videos" not in ctx.checkpoint or "0" not in ctx.checkpoint["videos"]
    fake.faults.rates.clear()
    fake.faults.processing_s = 0
    retried = _publish(ctx, "a clip", media=[_clip()])
    assert len(fake.video_uploads) == 2
    adapter.poll_segment(ctx, retried)
    assert len(fake.published()) == 1


def test_an_animated_gif_goes_through_the_video_service_never_as_a_still_image(fake, account):
    gif = image(alt="A spinning cat", data=b"GIF89a spinning", kind="gif", mime="image/gif")
    ctx = _ctx(account)

    pending = _publish(ctx, "a gif", media=[gif])
    _after_processing(fake)
    get_adapter("bluesky").poll_segment(ctx, pending)

    [post] = fake.published()
    embed = post.extra["record"]["embed"]
    assert embed["$type"] == "app.bsky.embed.video"
    assert embed["video"]["mimeType"] == "video/mp4"  # the service transcoded it
    assert embed["alt"] == "A spinning cat"
    assert not [call for call in fake.calls if "uploadBlob" in call[1]]


def test_video_already_processed_is_posted_at_once_with_the_earlier_blob(fake, account):
    first = _ctx(account, rendition_id=51)
    pending = _publish(first, "first", media=[_clip()])
    _after_processing(fake)
    get_adapter("bluesky").poll_segment(first, pending)

    published = _publish(_ctx(account, rendition_id=52), "second", media=[_clip()])

    assert published.pending is False
    posts = {p.text: p for p in fake.published()}
    assert (
        posts["second"].extra["record"]["embed"]["video"]
        == (posts["first"].extra["record"]["embed"]["video"])
    )
    assert len(fake.video_uploads) == 1


def test_an_account_without_a_verified_email_is_refused_before_uploading(fake, account, opened):
    fake.unverified_email.add(opened["remote_id"])

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "a clip", media=[_clip()])

    assert caught.value.kind == ErrorKind.PERMISSION_MISSING
    assert caught.value.code == "unconfirmed_email"
    assert fake.video_uploads == []


# --- renditions in flight before keys were checkpointed ----------------------------------


def _legacy_rendition(account, *, attempted: bool):
    rendition = RenditionFactory(
        publication__workspace=account.workspace, social_account=account, platform="bluesky"
    )
    if attempted:
        DeliveryAttempt.objects.create(
            rendition=rendition,
            workspace=account.workspace,
            kind=DeliveryAttempt.Kind.PUBLISH,
            segment_position=0,
            outcome=DeliveryAttempt.Outcome.UNKNOWN,
        )
    return rendition


def _pipeline_ctx(rendition, *, checkpoint=None) -> PublishContext:
    """The context the pipeline builds, which knows the rendition's earlier attempts."""
    rendition.checkpoint = dict(checkpoint or {})
    credentials = account_services.social_account_credentials(rendition.social_account)
    return publish_context(rendition, credentials)


def test_a_post_made_under_the_legacy_key_is_found_and_never_made_twice(fake, account):
    rendition = _legacy_rendition(account, attempted=True)
    legacy = legacy_segment_rkey(rendition.pk, 0)
    # What the earlier code did: a create under the legacy key, then no answer kept.
    _publish(_pipeline_ctx(rendition, checkpoint={"rkeys": {"0": legacy}}), "before deploy")
    [old] = fake.published()
    ctx = _pipeline_ctx(rendition)  # no rkey in the checkpoint
    segment = SegmentPayload(0, "before deploy")

    found = get_adapter("bluesky").lookup_segment(ctx, segment, not_before=datetime.now(UTC))
    resent = _publish(_pipeline_ctx(rendition), "before deploy")

    assert found.provider_post_id == old.id
    assert resent.provider_post_id == old.id
    assert len(fake.published()) == 1
    assert ctx.checkpoint["rkeys"]["0"] == legacy


def test_the_legacy_key_is_not_consulted_for_a_rendition_never_attempted(fake, account):
    rendition = _legacy_rendition(account, attempted=False)
    legacy = legacy_segment_rkey(rendition.pk, 0)
    _publish(_pipeline_ctx(rendition, checkpoint={"rkeys": {"0": legacy}}), "same text")

    published = _publish(_pipeline_ctx(rendition), "same text")

    assert fake.rkey_of(
        next(p for p in fake.published() if p.id == published.provider_post_id)
    ) == (segment_rkey(rendition.pk, 0, installation=installation_id()))
    assert len(fake.published()) == 2

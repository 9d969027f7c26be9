"""Videos uploaded by an API project that has not passed YouTube's compliance audit are
locked private, whatever privacy was asked for. The adapter records the privacy YouTube
answered with, not the one it asked for, and keeps a notice on the rendition saying why.
The real adapter against the YouTube fake."""

from __future__ import annotations

import io

import pytest

from apps.accounts import services as account_services
from apps.providers.base import MediaPayload, PublishContext, SegmentPayload, get_adapter
from apps.providers.youtube import media as youtube_media
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.youtube import CHUNK_MULTIPLE, YouTubeFake
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db

VIDEO = bytes(range(256)) * 1024 + b"tail"


@pytest.fixture
def serve(settings, monkeypatch):
    servers = []

    def start(**options) -> YouTubeFake:
        fake = YouTubeFake(FaultPlan(rates={}, processing_s=0.1), **options)
        servers.append(FakeServer([fake]).start())
        settings.PROVIDER_API_REDIRECT = servers[-1].base_url
        return fake

    settings.PROVIDER_TIMEOUT_S = 1
    monkeypatch.setattr(youtube_media, "CHUNK_SIZE", CHUNK_MULTIPLE)
    yield start
    for server in servers:
        server.stop()


def _account(fake: YouTubeFake, workspace):
    opened = fake.new_account("baker")
    return make_account(
        workspace,
        "youtube",
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
    )


def _ctx(account, privacy: str, saved: list[dict] | None = None) -> PublishContext:
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={"title": "Sourdough, start to finish", "privacy_status": privacy},
        rendition_id=31,
        idempotency_base="rendition-31",
        checkpoint={},
        checkpoint_saver=saved.append if saved is not None else None,
    )


def _segment() -> SegmentPayload:
    video = MediaPayload(
        media_id=1,
        kind="video",
        mime_type="video/mp4",
        size_bytes=len(VIDEO),
        alt_text="",
        open=lambda: io.BytesIO(VIDEO),
    )
    return SegmentPayload(0, "How this loaf was made.", [video])


def test_the_fake_locks_an_unaudited_projects_upload_private(serve, workspace_a):
    fake = serve(project_audited=False)
    ctx = _ctx(_account(fake, workspace_a), "public")

    get_adapter("youtube").publish_segment(ctx, _segment(), reply_to=None)

    [video] = fake.published()
    assert video.extra["privacy"] == "private"
    assert video.extra["privacy_requested"] == "public"


def test_the_lock_can_be_switched_per_channel(serve, workspace_a):
    fake = serve()
    locked = _account(fake, workspace_a)
    fake.lock_private(locked.remote_id)

    get_adapter("youtube").publish_segment(_ctx(locked, "unlisted"), _segment(), reply_to=None)

    [video] = fake.published()
    assert video.extra["privacy"] == "private"


@pytest.mark.parametrize("asked", ["public", "unlisted"])
def test_a_video_locked_private_records_its_real_privacy_and_says_why(serve, workspace_a, asked):
    fake = serve(project_audited=False)
    saved: list[dict] = []
    ctx = _ctx(_account(fake, workspace_a), asked, saved)

    get_adapter("youtube").publish_segment(ctx, _segment(), reply_to=None)

    result = ctx.checkpoint["result"]
    assert result["privacy_status"] == "private"
    assert result["privacy_requested"] == asked
    [notice] = result["notices"]
    assert notice["code"] == "locked_private"
    assert "private" in notice["message"] and "audit" in notice["message"]
    # Kept on the rendition at once, not only in memory.
    assert saved[-1]["result"] == result


def test_a_video_with_the_privacy_asked_for_carries_no_notice(serve, workspace_a):
    fake = serve()
    ctx = _ctx(_account(fake, workspace_a), "unlisted")

    get_adapter("youtube").publish_segment(ctx, _segment(), reply_to=None)

    result = ctx.checkpoint["result"]
    assert result["privacy_status"] == "unlisted"
    assert result["notices"] == []


def test_a_resumed_upload_found_complete_records_the_real_privacy_too(serve, workspace_a):
    fake = serve(project_audited=False)
    account = _account(fake, workspace_a)
    fake.faults.rates["timeout_after_accept"] = 1.0
    first = _ctx(account, "public")
    with pytest.raises(Exception):  # noqa: B017 - the answer is lost after the final byte
        get_adapter("youtube").publish_segment(first, _segment(), reply_to=None)
    fake.faults.rates.clear()
    again = _ctx(account, "public")
    again.checkpoint.update(first.checkpoint)

    found = get_adapter("youtube").lookup_segment(again, _segment(), not_before=_epoch())

    assert found is not None
    assert again.checkpoint["result"]["privacy_status"] == "private"
    assert again.checkpoint["result"]["notices"][0]["code"] == "locked_private"


def _epoch():
    from datetime import UTC, datetime

    return datetime(2020, 1, 1, tzinfo=UTC)


def test_the_posts_page_says_the_video_is_private_and_why(serve, workspace_a, alice, client):
    from django.urls import reverse

    from apps.renditions.models import Rendition
    from tests.factories import PublicationFactory, RenditionFactory

    fake = serve(project_audited=False)
    account = _account(fake, workspace_a)
    ctx = _ctx(account, "public")
    done = get_adapter("youtube").publish_segment(ctx, _segment(), reply_to=None)
    publication = PublicationFactory(workspace=workspace_a)
    RenditionFactory(
        publication=publication,
        social_account=account,
        status=Rendition.Status.PUBLISHED,
        provider_post_id=done.provider_post_id,
        provider_url=done.provider_url,
        published_at=done.published_at,
        checkpoint=ctx.checkpoint,  # as the pipeline keeps it
    )

    client.force_login(alice)
    page = client.get(
        reverse("publication-detail", kwargs={"workspace_slug": "ws-a", "pk": publication.pk})
    ).content.decode()

    assert 'data-notice="locked_private"' in page
    assert "YouTube made this video private although it was sent as public" in page

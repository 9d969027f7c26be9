"""The lookup that settles a lost upload once its session is gone finds the video whatever
its privacy: the uploads playlist may list a private video as "Private video" (each
candidate is read back by its id, with its own title) or leave an unlisted or private one
out (the owner's own search then finds it). The real adapter against the YouTube fake."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.providers.base import SegmentPayload, get_adapter
from loadtest.platform_fakes.base import StoredPost
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.youtube import YouTubeFake
from tests.providers.social_helpers import make_account, make_ctx

pytestmark = pytest.mark.django_db


@pytest.fixture
def youtube(settings):
    fake = YouTubeFake(FaultPlan(rates={}))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 2.0
    yield fake
    server.stop()


def _lookup(fake: YouTubeFake, workspace, privacy: str, *behaviours: str, title="Rye, start"):
    opened = fake.new_account("baker")
    channel = opened["remote_id"]
    for behaviour in behaviours:
        fake.switch(channel, behaviour)
    extra = {"title": "Rye, start", "privacy": privacy, "processed_at": 0, "fails": False}
    fake.store(StoredPost(id="vid12345678", account=channel, text="How", extra=extra))
    # An upload whose session is gone: only the channel's uploads can tell.
    ctx = make_ctx(make_account(workspace, "youtube", **opened), settings={"title": title})
    not_before = timezone.now() - timedelta(minutes=1)
    found = get_adapter("youtube").lookup_segment(
        ctx, SegmentPayload(0, "How"), not_before=not_before
    )
    return found, ctx


@pytest.mark.parametrize("privacy", ["public", "unlisted", "private"])
def test_the_video_is_found_whatever_its_privacy_when_the_playlist_lists_it(
    youtube, workspace_a, privacy
):
    found, ctx = _lookup(youtube, workspace_a, privacy)

    assert found is not None and found.provider_post_id == "vid12345678"
    assert ctx.checkpoint["result"]["privacy_status"] == privacy
    assert ("GET", "/youtube/v3/search") not in youtube.calls  # the playlist sufficed


def test_a_private_video_listed_as_private_video_is_found_by_its_own_title(youtube, workspace_a):
    found, _ = _lookup(youtube, workspace_a, "private", "private_placeholder")

    assert found is not None and found.provider_post_id == "vid12345678"
    assert ("GET", "/youtube/v3/videos") in youtube.calls


@pytest.mark.parametrize("privacy", ["unlisted", "private"])
def test_a_video_the_playlist_leaves_out_is_found_by_the_owners_search(
    youtube, workspace_a, privacy
):
    found, _ = _lookup(youtube, workspace_a, privacy, "unlisted_hidden")

    assert found is not None and found.provider_post_id == "vid12345678"
    assert ("GET", "/youtube/v3/search") in youtube.calls


def test_another_title_is_not_ours_anywhere(youtube, workspace_a):
    found, _ = _lookup(youtube, workspace_a, "private", "private_placeholder", title="Spelt")

    assert found is None


def test_a_video_from_before_the_attempt_is_not_ours(youtube, workspace_a):
    opened = youtube.new_account("baker")
    extra = {"title": "Rye, start", "privacy": "public", "processed_at": 0, "fails": False}
    old = StoredPost(id="vidold", account=opened["remote_id"], text="How", extra=extra)
    old.created_at = old.visible_at = time.time() - 3600
    youtube.store(old)
    ctx = make_ctx(make_account(workspace_a, "youtube", **opened), settings={"title": "Rye, start"})

    found = get_adapter("youtube").lookup_segment(
        ctx, SegmentPayload(0, "How"), not_before=timezone.now()
    )

    assert found is None

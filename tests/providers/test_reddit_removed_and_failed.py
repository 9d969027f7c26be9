"""Reddit's two ways of not quite publishing, against the Reddit fake switched per account:
a post removed by the spam filter as it is made (it exists; the rendition is published with
a notice saying who removed it), and a media post whose processing fails (Reddit makes no
post and says so only on a websocket: never published, and a person is told why)."""

from __future__ import annotations

import io
import time
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.providers.base import MediaPayload, SegmentPayload, get_adapter
from apps.providers.reddit.adapter import MEDIA_NOT_MADE
from apps.publications.services import media_asset_create
from apps.publishing.delivery import waiting
from apps.publishing.services import publication_create
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.reddit import RedditFake
from loadtest.platform_fakes.server import FakeServer
from loadtest.soak_fakes import jpeg_bytes
from tests.providers.social_helpers import make_account, make_ctx

SETTINGS = {"subreddit": "Breadit", "title": "My first rye"}
IMAGE = MediaPayload(1, "image", "image/jpeg", 4, "", lambda: io.BytesIO(jpeg_bytes()))


@pytest.fixture
def reddit(settings):
    fake = RedditFake(FaultPlan(rates={}, processing_s=0.0))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 2.0
    settings.RECONCILE_DELAY_S = 0
    yield fake
    server.stop()


def _account(workspace, fake: RedditFake, *behaviours: str):
    opened = fake.new_account("baker")
    for behaviour in behaviours:
        fake.switch(opened["remote_id"], behaviour)
    return make_account(workspace, "reddit", **opened)


@pytest.mark.django_db
def test_a_post_the_spam_filter_removed_is_published_with_a_notice_saying_so(reddit, workspace_a):
    ctx = make_ctx(_account(workspace_a, reddit, "spam_removed"), settings=SETTINGS)

    published = get_adapter("reddit").publish_segment(
        ctx, SegmentPayload(0, "Crumb shot below."), reply_to=None
    )

    [post] = reddit.published()  # it exists on Reddit
    assert published.provider_post_id == post.id and not published.pending
    result = ctx.checkpoint["result"]
    assert result["removed_by_category"] == "reddit"
    [notice] = result["notices"]
    assert notice["code"] == "removed"
    assert "then Reddit's spam filter removed it" in notice["message"]


@pytest.mark.django_db
def test_a_removed_media_post_found_by_its_poll_carries_the_notice(reddit, workspace_a):
    ctx = make_ctx(_account(workspace_a, reddit, "spam_removed"), settings=SETTINGS)
    adapter = get_adapter("reddit")

    pending = adapter.publish_segment(ctx, SegmentPayload(0, "Crumb", [IMAGE]), reply_to=None)
    found = adapter.poll_segment(ctx, pending)

    assert pending.pending and not found.pending
    assert ctx.checkpoint["result"]["notices"][0]["code"] == "removed"


@pytest.mark.django_db
def test_a_post_left_alone_carries_no_notice(reddit, workspace_a):
    ctx = make_ctx(_account(workspace_a, reddit), settings=SETTINGS)

    get_adapter("reddit").publish_segment(ctx, SegmentPayload(0, "Crumb"), reply_to=None)

    assert "result" not in ctx.checkpoint
    assert ("GET", "/api/info") in reddit.calls  # it was read back all the same


@pytest.mark.django_db
def test_a_failed_upload_is_never_listed_and_only_the_websocket_says_so(reddit, workspace_a):
    ctx = make_ctx(_account(workspace_a, reddit, "media_fails"), settings=SETTINGS)
    adapter = get_adapter("reddit")

    pending = adapter.publish_segment(ctx, SegmentPayload(0, "Crumb", [IMAGE]), reply_to=None)
    time.sleep(0.01)
    again = adapter.poll_segment(ctx, pending)

    assert again.pending  # nothing to find: the poll cannot tell failed from late
    assert reddit.published() == []
    [failed] = reddit.posts.values()
    assert failed.extra["websocket"]["type"] == "failed"


def test_an_unknown_switch_is_refused_naming_the_ones_there_are():
    with pytest.raises(ValueError, match="media_fails, spam_removed"):
        RedditFake().switch("u1", "shadowban")


@pytest.mark.django_db(transaction=True)
def test_a_failed_upload_ends_not_published_with_the_reason_for_a_person(
    reddit, workspace_a, monkeypatch
):
    account = _account(workspace_a, reddit, "media_fails")
    asset = media_asset_create(
        workspace=workspace_a,
        file=ContentFile(jpeg_bytes(), name="rye.jpg"),
        original_name="rye.jpg",
    )
    publication = publication_create(
        workspace=workspace_a,
        author=None,
        segments=[{"text": "Crumb", "media": [{"id": asset.pk}]}],
        destinations=[{"account": account.pk, "settings": SETTINGS}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    rendition = publication.renditions.get()
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")
    for job in worker.claim_batch():  # the publish: accepted, waiting
        worker.run_one(job)
    rendition.refresh_from_db()
    assert rendition.status == "waiting"

    # Reddit's ten minutes are spent at the next poll.
    monkeypatch.setattr(waiting, "next_poll_delay", lambda adapter, **kw: None)
    Job.objects.unfinished().update(run_at=timezone.now() - timedelta(seconds=1))
    worker.promote_waiting()
    for job in worker.claim_batch():
        worker.run_one(job)

    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == ("failed", True)
    assert rendition.provider_post_id == ""
    assert rendition.last_error["code"] == "processing_timeout"
    assert rendition.last_error["message"] == MEDIA_NOT_MADE.format(minutes=10)
    assert reddit.published() == []

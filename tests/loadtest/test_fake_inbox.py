"""The inbox against the platform fakes over HTTP: the Mastodon fake serves a post's replies
(its context) and takes replies; a reply whose answer is lost is looked up, never sent
again."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.installation import installation_id
from apps.inbox import replies as replying
from apps.inbox.models import Comment, Reply
from apps.inbox.replies import reply_create
from apps.inbox.sync import SYNC_JOB, sync_due, sync_start
from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.renditions.models import Rendition
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.base import StoredPost
from loadtest.platform_fakes.mastodon import MastodonFake
from loadtest.platform_fakes.server import FakeServer
from tests.factories import RenditionFactory
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake():
    return MastodonFake(FaultPlan(hang_s=1.0))


@pytest.fixture
def server(fake, settings):
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.5
    yield server
    server.stop()


@pytest.fixture
def worker():
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="inbox-fake")


def drain(worker: Worker, job_type: str) -> None:
    for _ in range(8):
        past = timezone.now() - timedelta(days=1)
        Job.objects.unfinished().filter(type=job_type).update(run_at=past)
        jobs = worker.claim_batch()
        if not jobs:
            return
        for job in jobs:
            worker.run_one(job)


def live_status(workspace, fake: MastodonFake) -> tuple[Rendition, StoredPost]:
    opened = fake.new_account("bakery")
    account = make_account(workspace, "mastodon", **opened)
    ours = opened["settings"]["account_id"]
    post = fake.store(StoredPost(id="113000000000000900", account=ours, text="Fresh bread"))
    rendition = RenditionFactory(
        publication__workspace=workspace,
        social_account=account,
        status=Rendition.Status.PUBLISHED,
        provider_post_id=post.id,
        published_at=timezone.now(),
    )
    return rendition, post


def replies_under(fake: MastodonFake, comment_id: str) -> list[StoredPost]:
    return [p for p in fake.published() if p.reply_to == comment_id]


def test_comments_are_read_and_a_lost_reply_is_looked_up_not_resent(
    fake, server, worker, workspace_a, alice
):
    rendition, post = live_status(workspace_a, fake)
    question = fake.add_comment(post.id, "fan", "Gluten free?")
    fake.add_comment(question.id, "other", "Same question")

    sync_start(rendition)
    sync_due()
    drain(worker, SYNC_JOB)
    stored = {c.platform_id: c for c in Comment.objects.filter(rendition=rendition)}
    assert set(stored) == {question.id, *[p.id for p in replies_under(fake, question.id)]}
    assert stored[question.id].author_handle == "fan" and not stored[question.id].is_ours

    fake.faults.rates["timeout_after_accept"] = 1.0  # stored, answered too late
    reply = reply_create(
        comment=stored[question.id], author=alice, text="Yes, on Fridays", needs_approval=False
    )
    drain(worker, replying.REPLY_JOB)
    fake.faults.rates.clear()
    drain(worker, replying.REPLY_JOB)

    reply.refresh_from_db()
    ours = [p for p in replies_under(fake, question.id) if p.text == "Yes, on Fridays"]
    assert len(ours) == 1
    assert reply.status == Reply.Status.SENT and reply.provider_reply_id == ours[0].id
    assert [a.kind for a in reply.attempts.order_by("pk")][:2] == ["send", "lookup"]


def test_bluesky_threads_are_read_and_a_lost_reply_is_found_by_its_record_key(
    settings, worker, workspace_a, alice
):
    from apps.providers.base import SegmentPayload, get_adapter
    from loadtest.platform_fakes.bluesky import BlueskyFake
    from tests.loadtest.test_fake_bluesky import _ctx

    installation_id.cache_clear()
    fake = BlueskyFake(FaultPlan(hang_s=1.0))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.5
    try:
        account = make_account(workspace_a, "bluesky", **fake.new_account("bakery"))
        rendition = RenditionFactory(
            publication__workspace=workspace_a,
            social_account=account,
            status=Rendition.Status.PUBLISHED,
            published_at=timezone.now(),
        )
        post = get_adapter("bluesky").publish_segment(
            _ctx(account, rendition.pk), SegmentPayload(0, "Fresh bread"), reply_to=None
        )
        Rendition.objects.filter(pk=rendition.pk).update(provider_post_id=post.provider_post_id)
        rendition.refresh_from_db()
        question = fake.add_comment(post.provider_post_id, "fan", "Rye too?")

        sync_start(rendition)
        sync_due()
        drain(worker, SYNC_JOB)
        comment = Comment.objects.get(rendition=rendition, platform_id=question.id)
        assert comment.author_handle == "fan.bsky.social" and not comment.is_ours

        fake.faults.rates["timeout_after_accept"] = 1.0
        reply = reply_create(
            comment=comment, author=alice, text="Rye on Mondays", needs_approval=False
        )
        drain(worker, replying.REPLY_JOB)
        fake.faults.rates.clear()
        drain(worker, replying.REPLY_JOB)
    finally:
        server.stop()
        installation_id.cache_clear()

    reply.refresh_from_db()
    answers = [p for p in fake.published() if p.reply_to == question.id]
    assert [p.text for p in answers] == ["Rye on Mondays"]
    assert answers[0].extra["record"]["reply"]["root"]["uri"] == post.provider_post_id
    assert reply.status == Reply.Status.SENT and reply.provider_reply_id == answers[0].id


def test_facebook_comments_a_reply_once_and_moderation(settings, worker, workspace_a, alice):
    """The Graph takes no idempotency handle: a resend after the lost answer would be a
    second comment, so only the lookup keeps the reply single."""
    from apps.inbox.services import comment_moderate
    from apps.providers.base import SegmentPayload, get_adapter
    from apps.providers.comment_reading import comment_reader
    from loadtest.platform_fakes.facebook import FacebookFake
    from tests.loadtest.test_fake_facebook import _ctx

    fake = FacebookFake(FaultPlan(rates={}, hang_s=1.5))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.75
    try:
        page = fake.new_account("Bakery")
        post = get_adapter("facebook").publish_segment(
            _ctx(fake, page), SegmentPayload(0, "Fresh bread"), reply_to=None
        )
        account = make_account(workspace_a, "facebook", **page)
        rendition = RenditionFactory(
            publication__workspace=workspace_a,
            social_account=account,
            status=Rendition.Status.PUBLISHED,
            provider_post_id=post.provider_post_id,
            published_at=timezone.now(),
        )
        question = fake.add_comment(post.provider_post_id, "Ann", "Open Sunday?")
        fake.add_comment(question["id"], "Bob", "Also Monday?")

        sync_start(rendition)
        sync_due()
        drain(worker, SYNC_JOB)
        comments = {c.platform_id: c for c in Comment.objects.filter(rendition=rendition)}
        assert len(comments) == 2 and comments[question["id"]].author_name == "Ann"
        assert comment_reader("facebook").reply_lookup_is_strong is False

        fake.faults.rates["timeout_after_accept"] = 1.0
        reply = reply_create(
            comment=comments[question["id"]], author=alice, text="9 to 1", needs_approval=False
        )
        drain(worker, replying.REPLY_JOB)
        fake.faults.rates.clear()
        drain(worker, replying.REPLY_JOB)

        comment_moderate(comment=comments[question["id"]], action="hide")
        drain(worker, "inbox.moderate")
    finally:
        server.stop()

    reply.refresh_from_db()
    ours = [c for c in fake.comments.values() if c["message"] == "9 to 1"]
    assert len(ours) == 1 and ours[0]["parent"] == question["id"]
    assert reply.status == Reply.Status.SENT and reply.provider_reply_id == ours[0]["id"]
    assert [a.kind for a in reply.attempts.order_by("pk")][:2] == ["send", "lookup"]
    assert fake.comments[question["id"]]["is_hidden"] is True
    assert Comment.objects.get(pk=comments[question["id"]].pk).is_hidden


def test_youtube_threads_a_reply_once_and_a_hidden_comment(settings, worker, workspace_a, alice):
    """comments.insert takes no idempotency handle: only the lookup keeps the reply single."""
    from apps.inbox.services import comment_moderate
    from loadtest.platform_fakes.youtube import YouTubeFake

    fake = YouTubeFake(FaultPlan(rates={}, hang_s=1.5))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.75
    try:
        opened = fake.new_account("bakery")
        account = make_account(workspace_a, "youtube", **opened)
        fake.store(StoredPost(id="vid1", account=opened["remote_id"], text="How to bake"))
        rendition = RenditionFactory(
            publication__workspace=workspace_a,
            social_account=account,
            status=Rendition.Status.PUBLISHED,
            provider_post_id="vid1",
            published_at=timezone.now(),
        )
        question = fake.add_comment("vid1", "ann", "Which flour?")
        fake.add_comment("vid1", "bob", "Same", parent=question["id"])

        sync_start(rendition)
        sync_due()
        drain(worker, SYNC_JOB)
        comments = {c.platform_id: c for c in Comment.objects.filter(rendition=rendition)}
        assert len(comments) == 2 and comments[question["id"]].author_name == "@ann"

        fake.faults.rates["timeout_after_accept"] = 1.0
        reply = reply_create(
            comment=comments[question["id"]], author=alice, text="Rye", needs_approval=False
        )
        drain(worker, replying.REPLY_JOB)
        fake.faults.rates.clear()
        drain(worker, replying.REPLY_JOB)

        comment_moderate(comment=comments[question["id"]], action="hide")
        drain(worker, "inbox.moderate")
    finally:
        server.stop()

    reply.refresh_from_db()
    ours = [c for c in fake.comments["vid1"] if c["message"]["text"] == "Rye"]
    assert len(ours) == 1 and ours[0]["parent"] == question["id"]
    assert reply.status == Reply.Status.SENT and reply.provider_reply_id == ours[0]["id"]
    assert [a.kind for a in reply.attempts.order_by("pk")][:2] == ["send", "lookup"]
    assert question["moderation"] == "rejected"


def test_reddit_reads_the_tree_and_a_lost_reply_is_found_among_the_users_comments(
    settings, worker, workspace_a, alice
):
    from loadtest.platform_fakes.reddit import RedditFake

    fake = RedditFake(FaultPlan(rates={}, hang_s=1.5))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.75
    try:
        opened = fake.new_account("bakery")
        account = make_account(workspace_a, "reddit", **opened)
        fake.store(StoredPost(id="t3_abc", account=opened["remote_id"], text="My rye"))
        rendition = RenditionFactory(
            publication__workspace=workspace_a,
            social_account=account,
            status=Rendition.Status.PUBLISHED,
            provider_post_id="t3_abc",
            published_at=timezone.now(),
        )
        question = fake.add_comment("t3_abc", "ann", "Hydration?")
        fake.add_comment(question["id"], "bob", "Following")

        sync_start(rendition)
        sync_due()
        drain(worker, SYNC_JOB)
        comments = {c.platform_id: c for c in Comment.objects.filter(rendition=rendition)}
        assert set(comments) == {c["id"] for c in fake.comments["t3_abc"]}
        assert comments[question["id"]].author_handle == "ann"

        fake.faults.rates["timeout_after_accept"] = 1.0
        reply = reply_create(
            comment=comments[question["id"]], author=alice, text="80%", needs_approval=False
        )
        drain(worker, replying.REPLY_JOB)
        fake.faults.rates.clear()
        drain(worker, replying.REPLY_JOB)
    finally:
        server.stop()

    reply.refresh_from_db()
    ours = [c for c in fake.comments["t3_abc"] if c["message"]["text"] == "80%"]
    assert len(ours) == 1 and ours[0]["parent"] == question["id"]
    assert reply.status == Reply.Status.SENT and reply.provider_reply_id == ours[0]["id"]
    assert [a.kind for a in reply.attempts.order_by("pk")][:2] == ["send", "lookup"]


def test_instagram_replies_once_and_hides(settings, worker, workspace_a, alice):
    """Instagram takes no idempotency handle: only the lookup keeps the reply single."""
    from apps.inbox.services import comment_moderate
    from loadtest.platform_fakes.instagram import InstagramFake
    from loadtest.platform_fakes.meta import graph_id

    fake = InstagramFake(FaultPlan(rates={}, hang_s=1.5))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.75
    try:
        opened = fake.new_account("bakery")
        account = make_account(workspace_a, "instagram", **opened)
        media = fake.store(StoredPost(id=graph_id(), account=opened["remote_id"], text="Rye"))
        rendition = RenditionFactory(
            publication__workspace=workspace_a,
            social_account=account,
            status=Rendition.Status.PUBLISHED,
            provider_post_id=media.id,
            published_at=timezone.now(),
        )
        question = fake.add_comment(media.id, "ann", "Price?")
        fake.add_comment(media.id, "bob", "Same", parent=question["id"])

        sync_start(rendition)
        sync_due()
        drain(worker, SYNC_JOB)
        comments = {c.platform_id: c for c in Comment.objects.filter(rendition=rendition)}
        assert len(comments) == 2 and comments[question["id"]].author_handle == "ann"

        fake.faults.rates["timeout_after_accept"] = 1.0
        reply = reply_create(
            comment=comments[question["id"]], author=alice, text="5 euros", needs_approval=False
        )
        drain(worker, replying.REPLY_JOB)
        fake.faults.rates.clear()
        drain(worker, replying.REPLY_JOB)

        comment_moderate(comment=comments[question["id"]], action="hide")
        drain(worker, "inbox.moderate")
    finally:
        server.stop()

    reply.refresh_from_db()
    ours = [c for c in fake.comments_on(media.id) if c["message"] == "5 euros"]
    assert len(ours) == 1 and ours[0]["parent"] == question["id"]
    assert reply.status == Reply.Status.SENT and reply.provider_reply_id == ours[0]["id"]
    assert [a.kind for a in reply.attempts.order_by("pk")][:2] == ["send", "lookup"]
    assert question["hidden"] is True

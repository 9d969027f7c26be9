"""The inbox against the X and Threads fakes over HTTP: the conversation read through the
real readers, and a reply whose answer is lost looked up and kept once (neither platform
takes an idempotency handle, so a blind resend would be a second reply)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.inbox import replies as replying
from apps.inbox.models import Comment, CommentSync, Reply
from apps.inbox.replies import reply_create
from apps.inbox.sync import SYNC_JOB, sync_due, sync_start
from apps.jobs.worker import Worker
from apps.renditions.models import Rendition
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.base import StoredPost
from loadtest.platform_fakes.server import FakeServer
from tests.factories import RenditionFactory
from tests.loadtest.test_fake_inbox import drain
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db


@pytest.fixture
def worker():
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="inbox-xt")


def _serve(fake, settings):
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.75
    return server


def _live(workspace, platform: str, opened: dict, post_id: str) -> Rendition:
    return RenditionFactory(
        publication__workspace=workspace,
        social_account=make_account(
            workspace, platform, **{k: v for k, v in opened.items() if k != "display_name"}
        ),
        status=Rendition.Status.PUBLISHED,
        provider_post_id=post_id,
        published_at=timezone.now(),
    )


def test_x_conversation_read_a_lost_reply_kept_once_and_hidden(
    settings, worker, workspace_a, alice
):
    from apps.inbox.services import comment_moderate
    from loadtest.platform_fakes.x import XFake, snowflake

    fake = XFake(FaultPlan(rates={}, hang_s=1.5))
    server = _serve(fake, settings)
    try:
        opened = fake.new_account("bakery")
        post = fake.store(
            StoredPost(id=snowflake(fake.clock()), account=opened["remote_id"], text="Rye")
        )
        rendition = _live(workspace_a, "x", opened, post.id)
        question = fake.add_comment(post.id, "ann", "Sourdough?")
        answer = fake.add_comment(question.id, "bob", "Yes it is")
        fake.add_comment(snowflake(fake.clock()), "carl", "Elsewhere")  # another conversation

        sync_start(rendition)
        sync_due()
        drain(worker, SYNC_JOB)
        comments = {c.platform_id: c for c in Comment.objects.filter(rendition=rendition)}
        assert set(comments) == {question.id, answer.id}
        assert comments[question.id].author_handle == "ann"
        assert comments[answer.id].parent_id == comments[question.id].pk

        fake.faults.rates["timeout_after_accept"] = 1.0  # stored, answered too late
        reply = reply_create(
            comment=comments[question.id], author=alice, text="Always", needs_approval=False
        )
        drain(worker, replying.REPLY_JOB)
        fake.faults.rates.clear()
        drain(worker, replying.REPLY_JOB)

        comment_moderate(comment=comments[question.id], action="hide")
        drain(worker, "inbox.moderate")
    finally:
        server.stop()

    reply.refresh_from_db()
    ours = [p for p in fake.published() if p.text == "Always"]
    assert len(ours) == 1 and ours[0].reply_to == question.id
    assert reply.status == Reply.Status.SENT and reply.provider_reply_id == ours[0].id
    assert [a.kind for a in reply.attempts.order_by("pk")][:2] == ["send", "lookup"]
    assert question.extra["hidden"] is True


def test_threads_conversation_read_at_any_depth_and_a_reply_hidden(settings, worker, workspace_a):
    from apps.inbox.services import comment_moderate
    from loadtest.platform_fakes.meta import graph_id
    from loadtest.platform_fakes.threads import ThreadsFake
    from loadtest.platform_fakes.threads_comments import PAGE

    fake = ThreadsFake(FaultPlan(rates={}))
    server = _serve(fake, settings)
    try:
        opened = fake.new_account("bakery")
        post = fake.store(StoredPost(id=graph_id(), account=opened["remote_id"], text="Rye"))
        rendition = _live(workspace_a, "threads", opened, post.id)
        question = fake.add_comment(post.id, "ann", "Sourdough?")
        answer = fake.add_comment(question.id, "bob", "Yes it is")
        more = [fake.add_comment(post.id, f"fan{i}", f"Nice {i}") for i in range(PAGE)]
        other = fake.store(StoredPost(id=graph_id(), account=opened["remote_id"], text="Other"))
        fake.add_comment(other.id, "carl", "Elsewhere")

        sync_start(rendition)
        sync_due()
        drain(worker, SYNC_JOB)
        comments = {c.platform_id: c for c in Comment.objects.filter(rendition=rendition)}
        assert set(comments) == {question.id, answer.id, *[c.id for c in more]}  # two pages
        assert comments[question.id].author_handle == "ann"
        assert comments[answer.id].parent_id == comments[question.id].pk

        comment_moderate(comment=comments[question.id], action="hide")
        drain(worker, "inbox.moderate")
    finally:
        server.stop()

    assert question.extra["hidden"] is True
    assert Comment.objects.get(pk=comments[question.id].pk).is_hidden


def test_threads_reply_in_two_steps_a_lost_publish_looked_up_and_kept_once(
    settings, worker, workspace_a, alice
):
    """Only the publish is irreversible: its answer lost, the reply is looked for in the
    conversation before anything is sent again (a resend would be a second reply)."""
    from loadtest.platform_fakes.meta import graph_id
    from loadtest.platform_fakes.threads import ThreadsFake

    fake = ThreadsFake(FaultPlan(rates={}, hang_s=1.5))
    publish, publishes = fake.publish_container, []

    def answer_lost_once(*args, **kwargs):
        fake.faults.rates["timeout_after_accept"] = 0.0 if publishes else 1.0
        publishes.append(args)
        try:
            return publish(*args, **kwargs)
        finally:
            fake.faults.rates.clear()

    fake.publish_container = answer_lost_once  # type: ignore[method-assign]
    server = _serve(fake, settings)
    try:
        opened = fake.new_account("bakery")
        post = fake.store(StoredPost(id=graph_id(), account=opened["remote_id"], text="Rye"))
        rendition = _live(workspace_a, "threads", opened, post.id)
        question = fake.add_comment(post.id, "ann", "Sourdough?")
        other = fake.add_comment(post.id, "bob", "Open today?")
        sync_start(rendition)
        sync_due()
        drain(worker, SYNC_JOB)
        comment = Comment.objects.get(rendition=rendition, platform_id=question.id)

        reply = reply_create(comment=comment, author=alice, text="Always", needs_approval=False)
        drain(worker, replying.REPLY_JOB)
        drain(worker, replying.REPLY_JOB)
        answered = Comment.objects.get(rendition=rendition, platform_id=other.id)
        plain = reply_create(comment=answered, author=alice, text="Yes", needs_approval=False)
        drain(worker, replying.REPLY_JOB)  # answered at once: sent with no link
        assert Comment.objects.get(platform_id=_sent_id(plain)).url == ""
        CommentSync.objects.filter(rendition=rendition).update(next_read_at=timezone.now())
        sync_due()
        drain(worker, SYNC_JOB)  # the next read gives our reply its link
    finally:
        server.stop()

    reply.refresh_from_db()
    ours = [p for p in fake.published() if p.text == "Always"]
    assert len(publishes) == 2 and len(ours) == 1 and ours[0].reply_to == question.id
    assert ours[0].extra["params"]["reply_to_id"] == question.id
    assert reply.status == Reply.Status.SENT and reply.provider_reply_id == ours[0].id
    assert [a.kind for a in reply.attempts.order_by("pk")] == ["send", "lookup"]
    link = Comment.objects.get(platform_id=_sent_id(plain)).url
    assert link.startswith("https://www.threads.net/@bakery/post/")


def _sent_id(reply: Reply) -> str:
    reply.refresh_from_db()
    assert reply.status == Reply.Status.SENT
    return reply.provider_reply_id


def test_threads_a_reply_deleted_by_its_author_is_marked_gone_only_after_a_complete_read(
    settings, worker, workspace_a, monkeypatch
):
    from apps.inbox.sync import GONE_GRACE
    from apps.providers.threads import inbox as threads_inbox
    from loadtest.platform_fakes.meta import graph_id
    from loadtest.platform_fakes.threads import ThreadsFake
    from loadtest.platform_fakes.threads_comments import PAGE

    fake = ThreadsFake(FaultPlan(rates={}))
    server = _serve(fake, settings)

    def read() -> dict[str, Comment]:
        sync_start(rendition)
        CommentSync.objects.filter(rendition=rendition).update(next_read_at=timezone.now())
        assert sync_due() == 1
        drain(worker, SYNC_JOB)
        return {c.platform_id: c for c in Comment.objects.filter(rendition=rendition)}

    try:
        opened = fake.new_account("bakery")
        post = fake.store(StoredPost(id=graph_id(), account=opened["remote_id"], text="Rye"))
        rendition = _live(workspace_a, "threads", opened, post.id)
        regret = fake.add_comment(post.id, "ann", "Rude words")
        for i in range(PAGE):
            fake.add_comment(post.id, f"fan{i}", f"Nice {i}")
        assert len(read()) == PAGE + 1
        past = timezone.now() - GONE_GRACE - GONE_GRACE
        Comment.objects.filter(rendition=rendition).update(created_at=past)
        fake.remove(regret.id)  # its author deleted it

        monkeypatch.setattr(threads_inbox, "MAX_PAGES", 1)  # a read that stops short
        fake.add_comment(post.id, "late", "One more")  # the last page stays unread
        assert read()[regret.id].gone_at is None

        monkeypatch.setattr(threads_inbox, "MAX_PAGES", 4)
        comments = read()
    finally:
        server.stop()

    assert comments[regret.id].gone_at is not None
    assert [c for c, row in comments.items() if row.gone_at] == [regret.id]

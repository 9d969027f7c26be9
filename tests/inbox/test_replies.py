"""Replies from the inbox: sent once, whatever the platform did to the answer; looked up,
never resent on a guess; a rate limit waits; an approval holds the send."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.inbox import replies as replying
from apps.inbox.models import Comment, ReplyAttempt
from apps.inbox.replies import reply_create, reply_retry, reply_review
from apps.inbox.sync import store_comments, sync_start
from apps.jobs.models import Job
from apps.providers.base import PublishedSegment
from apps.providers.comment_reading import CommentReader, InboxOffer, RemoteComment
from apps.providers.errors import ErrorKind, ProviderError
from apps.sandbox.comments import sandbox_comment_add
from apps.sandbox.models import SandboxPost
from tests.inbox.conftest import live_post, misbehave, run_due

pytestmark = pytest.mark.django_db
A = ReplyAttempt


def a_comment(workspace, handle="baker", **behaviour) -> tuple[Comment, SandboxPost]:
    rendition, post = live_post(workspace, handle, **behaviour)
    fan = sandbox_comment_add(post=post, handle=f"fan-of-{handle}", text="When do you open?")
    item = RemoteComment(
        platform_id=str(fan.pk), text=fan.text, created_at=fan.created_at, author_handle="fan"
    )
    (comment,) = store_comments(sync_start(rendition), [item])
    return comment, fan


def sandbox_replies(fan: SandboxPost) -> list[SandboxPost]:
    return list(SandboxPost.objects.filter(reply_to=fan))


def drain(worker, limit: int = 10) -> None:
    for _ in range(limit):
        # Long past: the test's transaction holds the database clock at its start.
        past = timezone.now() - timedelta(days=1)
        Job.objects.unfinished().filter(type=replying.REPLY_JOB).update(run_at=past)
        if not run_due(worker):
            return


def test_a_reply_is_sent_once_and_joins_the_thread_as_ours(
    sandbox_http, worker, workspace_a, alice
):
    comment, fan = a_comment(workspace_a)

    reply = reply_create(comment=comment, author=alice, text="At 7!", needs_approval=False)
    drain(worker)

    (sent,) = sandbox_replies(fan)
    reply.refresh_from_db()
    assert reply.status == "sent" and reply.provider_reply_id == str(sent.pk)
    assert sent.text == "At 7!" and sent.idempotency_key == reply.idempotency_key
    comment.refresh_from_db()
    assert comment.is_answered
    ours = Comment.objects.get(platform_id=str(sent.pk))
    assert ours.is_ours and ours.parent == comment
    assert [(a.kind, a.outcome) for a in reply.attempts.all()] == [("send", "sent")]


def test_a_lost_answer_is_looked_up_and_the_reply_never_sent_twice(
    sandbox_http, worker, workspace_a, alice
):
    # The platform would take a resend as a second reply: only the lookup prevents it.
    comment, fan = a_comment(workspace_a, honours_idempotency_key=False)
    misbehave("baker", lost_answer_times=1)

    reply = reply_create(comment=comment, author=alice, text="At 7!", needs_approval=False)
    run_due(worker)
    reply.refresh_from_db()
    assert reply.status == "pending"  # the reply may exist: its job comes back to look
    drain(worker)

    reply.refresh_from_db()
    assert len(sandbox_replies(fan)) == 1
    assert reply.status == "sent"
    assert [(a.kind, a.outcome) for a in reply.attempts.all()] == [
        ("send", "unknown"),
        ("lookup", "found"),
    ]


def test_a_rate_limited_reply_waits_for_retry_after(sandbox_http, worker, workspace_a, alice):
    comment, fan = a_comment(workspace_a, retry_after_s=300)
    misbehave("baker", rate_limit_times=1)

    reply = reply_create(comment=comment, author=alice, text="At 7!", needs_approval=False)
    run_due(worker)

    job = Job.objects.get(type=replying.REPLY_JOB)
    assert job.status == "pending" and job.run_at >= timezone.now() + timedelta(seconds=280)
    assert sandbox_replies(fan) == []
    reply.refresh_from_db()
    assert reply.status == "pending"
    assert [(a.kind, a.outcome) for a in reply.attempts.all()] == [("send", "failed")]


class _Listing(CommentReader):
    """A platform that took the reply but never answers, and whose listing never shows
    it: a weak lookup, so nothing may be sent again."""

    platform = "sandbox"
    offer = InboxOffer(read=True, reply=True)
    reply_lookup_is_strong = False

    def __init__(self) -> None:
        self.sent = 0

    def reply(self, ctx, post, comment_id, text, *, key) -> PublishedSegment:
        self.sent += 1
        raise ProviderError(ErrorKind.OUTCOME_UNKNOWN, "Timed out after sending.")

    def find_reply(self, ctx, post, comment_id, text, *, key) -> PublishedSegment | None:
        return None


def test_a_weak_lookup_that_finds_nothing_leaves_the_reply_to_a_person(
    sandbox_http, worker, workspace_a, alice, monkeypatch, settings
):
    settings.RECONCILE_SETTLE_S = 0  # the unanswered send can no longer land
    comment, _fan = a_comment(workspace_a)
    reader = _Listing()
    monkeypatch.setattr("apps.inbox.connect.comment_reader", lambda platform: reader)

    reply = reply_create(comment=comment, author=alice, text="At 7!", needs_approval=False)
    drain(worker)

    reply.refresh_from_db()
    assert reader.sent == 1
    assert reply.status == "unknown"
    assert reply.last_error["code"] == "reply_outcome_unknown"
    kinds = [a.kind for a in reply.attempts.all()]
    assert kinds[0] == "send" and set(kinds[1:]) == {"lookup"}

    # A person found no reply: sent again without another lookup.
    reply_retry(reply=reply)
    run_due(worker)
    assert reader.sent == 2


class _Held(_Listing):
    """A platform still saving the reply when the client gave up: not listed until it
    lands, and a resend under its key meanwhile refused as in progress."""

    def __init__(self) -> None:
        super().__init__()
        self.landed = False

    def reply(self, ctx, post, comment_id, text, *, key) -> PublishedSegment:
        self.sent += 1
        if self.sent > 1:
            raise ProviderError(
                ErrorKind.PROVIDER_UNAVAILABLE,
                "There was a temporary problem serving your request",
                code="request_in_progress",
            )
        raise ProviderError(ErrorKind.OUTCOME_UNKNOWN, "Timed out after sending.")

    def find_reply(self, ctx, post, comment_id, text, *, key) -> PublishedSegment | None:
        return PublishedSegment("held-1", "https://sandbox.example/held-1") if self.landed else None


def test_a_reply_not_listed_yet_is_looked_for_until_it_lands_without_spending_tries(
    sandbox_http, worker, workspace_a, alice, monkeypatch, settings
):
    settings.RECONCILE_SETTLE_S = 300
    comment, _fan = a_comment(workspace_a)
    reader = _Held()
    monkeypatch.setattr("apps.inbox.connect.comment_reader", lambda platform: reader)
    reply = reply_create(comment=comment, author=alice, text="At 7!", needs_approval=False)

    drain(worker, limit=12)  # more checks than the job has tries

    reply.refresh_from_db()
    assert reply.status == "pending"  # not handed to a person inside the settle window
    job = Job.objects.get(type=replying.REPLY_JOB)
    assert job.status == "pending" and job.attempts == 1  # the checks spent no try
    reader.landed = True
    drain(worker)
    reply.refresh_from_db()
    assert reply.status == "sent" and reply.provider_reply_id == "held-1"
    assert reader.sent == 1


def test_a_resend_meeting_a_running_request_under_its_key_waits_and_sends_nothing_more(
    sandbox_http, worker, workspace_a, alice, monkeypatch, settings
):
    comment, _fan = a_comment(workspace_a)
    reader = _Held()
    monkeypatch.setattr("apps.inbox.connect.comment_reader", lambda platform: reader)
    reply = reply_create(comment=comment, author=alice, text="At 7!", needs_approval=False)
    settings.RECONCILE_SETTLE_S = 0
    drain(worker)
    reply.refresh_from_db()
    assert reply.status == "unknown"

    # A person found nothing (the first request still runs) and sends it again.
    settings.RECONCILE_SETTLE_S = 300
    reply_retry(reply=reply)
    drain(worker, limit=12)

    reply.refresh_from_db()
    assert reply.status == "pending" and reader.sent == 2
    assert reply.attempts.filter(kind="send").last().error["code"] == "request_in_progress"
    reader.landed = True
    drain(worker)
    reply.refresh_from_db()
    assert reply.status == "sent" and reader.sent == 2


class _Throttled(_Listing):
    """A platform whose listing throttles every lookup (429 with no reset given)."""

    def find_reply(self, ctx, post, comment_id, text, *, key) -> PublishedSegment | None:
        raise ProviderError(ErrorKind.RATE_LIMITED, "Too many requests", code="rate_limited")


def test_a_throttled_lookup_spends_no_try_and_never_fails_a_reply_that_may_exist(
    sandbox_http, worker, workspace_a, alice, monkeypatch, settings
):
    settings.RECONCILE_SETTLE_S = 0
    comment, _fan = a_comment(workspace_a)
    reader = _Throttled()
    monkeypatch.setattr("apps.inbox.connect.comment_reader", lambda platform: reader)
    reply = reply_create(comment=comment, author=alice, text="At 7!", needs_approval=False)

    drain(worker, limit=12)

    reply.refresh_from_db()
    assert reply.status == "pending" and reader.sent == 1
    job = Job.objects.get(type=replying.REPLY_JOB)
    assert job.status == "pending" and job.attempts == 1
    lookups = reply.attempts.filter(kind="lookup")
    assert lookups.count() >= 6
    assert {a.error["kind"] for a in lookups} == {"rate_limited"}


def test_an_approval_holds_the_send(sandbox_http, worker, workspace_a, alice, bob):
    comment, fan = a_comment(workspace_a)

    reply = reply_create(comment=comment, author=bob, text="At 7!", needs_approval=True)
    assert reply.status == "awaiting_approval"
    assert not Job.objects.filter(type=replying.REPLY_JOB).exists()

    reply_review(reply=reply, reviewer=alice, approve=True)
    drain(worker)
    reply.refresh_from_db()
    assert reply.status == "sent" and reply.approved_by == alice
    assert len(sandbox_replies(fan)) == 1


def test_the_webhooks_say_what_was_received_and_replied(sandbox_http, worker, workspace_a, alice):
    from apps.webhooks.models import WebhookEvent
    from apps.webhooks.services import webhook_endpoint_create

    # An IP literal needs no name resolution; it is a public address.
    webhook_endpoint_create(workspace=workspace_a, url="https://93.184.215.14/hooks")
    comment, _fan = a_comment(workspace_a)
    reply_create(comment=comment, author=alice, text="At 7!", needs_approval=False)
    drain(worker)

    received, replied = WebhookEvent.objects.order_by("pk")
    assert received.type == "comment.received"
    assert received.data["comment"]["platform_id"] == comment.platform_id
    assert replied.type == "comment.replied"
    assert replied.data["reply"]["text"] == "At 7!"
    assert replied.data["comment"]["id"] == comment.pk


def test_a_person_who_finds_an_unknown_reply_records_it_sent_and_nothing_is_sent(
    sandbox_http, worker, workspace_a, alice, monkeypatch, settings
):
    settings.RECONCILE_SETTLE_S = 0
    from apps.common.errors import Conflict
    from apps.inbox.replies import reply_mark_sent

    comment, fan = a_comment(workspace_a)
    reader = _Listing()
    monkeypatch.setattr("apps.inbox.connect.comment_reader", lambda platform: reader)
    reply = reply_create(comment=comment, author=alice, text="At 7!", needs_approval=False)
    drain(worker)
    reply.refresh_from_db()
    assert reply.status == "unknown"

    reply_mark_sent(reply=reply, url="https://sandbox.example/1")
    drain(worker)

    reply.refresh_from_db()
    comment.refresh_from_db()
    assert reply.status == "sent" and reply.provider_url == "https://sandbox.example/1"
    assert comment.is_answered and reader.sent == 1
    assert reply.attempts.order_by("pk").last().kind == "resolve"
    with pytest.raises(Conflict):
        reply_mark_sent(reply=reply)

"""Reading comments: what a read stores, who is ours, the cadence, and the backoff."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.common import events
from apps.inbox.models import Comment, CommentSync
from apps.inbox.sync import SYNC_JOB, next_read_at, sync_due, sync_start
from apps.jobs.models import Job
from apps.renditions.models import FirstComment
from apps.sandbox.comments import sandbox_comment_add
from apps.sandbox.models import SandboxPost
from tests.factories import RenditionFactory
from tests.inbox.conftest import live_post, misbehave, run_due

pytestmark = pytest.mark.django_db


@pytest.fixture
def received(monkeypatch):
    seen: list = []
    monkeypatch.setitem(
        events._subscribers,
        events.COMMENT_RECEIVED,
        [events._Subscriber(lambda comment: seen.append(comment.platform_id), True)],
    )
    return seen


def read_once(worker, rendition) -> None:
    sync_start(rendition)
    assert sync_due() == 1
    assert run_due(worker) == 1


def test_a_read_keeps_the_thread_marks_ours_and_announces_the_others(
    sandbox_http, worker, workspace_a, received
):
    rendition, post = live_post(workspace_a)
    first = SandboxPost.objects.create(
        account=post.account, text="Link below", reply_to=post, is_comment=True
    )
    FirstComment.objects.create(
        rendition=rendition,
        workspace=workspace_a,
        text="Link below",
        status="published",
        provider_comment_id=str(first.pk),
    )
    fan = sandbox_comment_add(post=post, handle="fan", text="Looks great!")
    answer = sandbox_comment_add(post=post, handle="critic", text="Meh", reply_to=fan)

    read_once(worker, rendition)

    comments = {c.platform_id: c for c in Comment.objects.filter(rendition=rendition)}
    assert set(comments) == {str(first.pk), str(fan.pk), str(answer.pk)}
    assert comments[str(first.pk)].is_ours and comments[str(first.pk)].state == "done"
    assert not comments[str(fan.pk)].is_ours and comments[str(fan.pk)].state == "open"
    assert comments[str(fan.pk)].author_handle == "fan"
    assert comments[str(fan.pk)].parent is None
    assert comments[str(answer.pk)].parent == comments[str(fan.pk)]
    assert sorted(received) == sorted([str(fan.pk), str(answer.pk)])
    sync = CommentSync.objects.get(rendition=rendition)
    assert sync.reads == 1 and sync.last_read_at is not None


def test_a_second_read_adds_only_what_is_new(sandbox_http, worker, workspace_a, received):
    rendition, post = live_post(workspace_a)
    sandbox_comment_add(post=post, handle="fan", text="First!")
    read_once(worker, rendition)
    later = sandbox_comment_add(post=post, handle="fan2", text="Second")
    CommentSync.objects.filter(rendition=rendition).update(next_read_at=timezone.now())

    assert sync_due() == 1
    run_due(worker)

    assert Comment.objects.filter(rendition=rendition).count() == 2
    assert received[-1] == str(later.pk) and len(received) == 2


def test_a_rate_limited_read_waits_for_retry_after_and_stores_nothing(
    sandbox_http, worker, workspace_a
):
    rendition, post = live_post(workspace_a, retry_after_s=120)
    sandbox_comment_add(post=post, handle="fan", text="Hello")
    misbehave("baker", read_rate_limit_times=1)
    sibling = RenditionFactory(
        publication__workspace=workspace_a,
        social_account=rendition.social_account,
        status="published",
        provider_post_id="other",
        published_at=timezone.now(),
    )
    later_sync = sync_start(sibling)
    # Due in half a minute: not read by this sweep, but before the platform's Retry-After.
    CommentSync.objects.filter(pk=later_sync.pk).update(
        next_read_at=timezone.now() + timedelta(seconds=30)
    )

    read_once(worker, rendition)

    job = Job.objects.get(type=SYNC_JOB)
    assert job.status == "pending" and job.attempts == 1
    assert job.run_at >= timezone.now() + timedelta(seconds=100)
    assert job.last_error["kind"] == "rate_limited"
    assert not Comment.objects.exists()
    # The account's other reads wait as long.
    later_sync.refresh_from_db()
    assert later_sync.next_read_at >= timezone.now() + timedelta(seconds=100)


def test_the_cadence_decays_with_the_post_age_and_stops_after_90_days():
    now = timezone.now()
    assert next_read_at(now - timedelta(hours=2), now) == now + timedelta(minutes=10)
    assert next_read_at(now - timedelta(days=3), now) == now + timedelta(hours=1)
    assert next_read_at(now - timedelta(days=10), now) == now + timedelta(hours=6)
    assert next_read_at(now - timedelta(days=60), now) == now + timedelta(days=1)
    assert next_read_at(now - timedelta(days=91), now) is None


def test_the_sweep_enqueues_due_reads_and_moves_their_next_read(sandbox_http, workspace_a):
    rendition, _post = live_post(workspace_a)
    sync_start(rendition)

    assert sync_due() == 1
    sync = CommentSync.objects.get(rendition=rendition)
    assert sync.next_read_at > timezone.now() + timedelta(minutes=9)
    job = Job.objects.get(type=SYNC_JOB)
    assert job.lane == "sandbox" and job.payload == {"sync_id": sync.pk}
    assert sync_due() == 0  # not due again yet


def test_a_platform_that_offers_no_comments_says_so(worker, workspace_a):
    rendition, _post = live_post(workspace_a)
    rendition.platform = "pinterest"
    rendition.save(update_fields=["platform"])

    read_once(worker, rendition)

    sync = CommentSync.objects.get(rendition=rendition)
    assert "Pinterest" in sync.unavailable
    assert sync.next_read_at is None


def test_a_post_going_live_gets_its_read_schedule(workspace_a):
    from apps.common import events as domain_events

    rendition, _post = live_post(workspace_a)
    domain_events.emit(domain_events.RENDITION_PUBLISHED, rendition=rendition)

    sync = CommentSync.objects.get(rendition=rendition)
    assert sync.platform == "sandbox" and sync.next_read_at is not None


def test_a_reply_read_before_its_comment_is_threaded_once_the_comment_is_read(workspace_a):
    from apps.inbox.sync import store_comments
    from apps.providers.comment_reading import RemoteComment

    rendition, _post = live_post(workspace_a)
    sync = sync_start(rendition)
    now = timezone.now()
    child = RemoteComment(platform_id="2", text="me too", created_at=now, parent_id="1")
    store_comments(sync, [child])
    assert Comment.objects.get(platform_id="2").parent is None

    parent = RemoteComment(platform_id="1", text="open?", created_at=now - timedelta(minutes=1))
    store_comments(sync, [parent, child])

    assert Comment.objects.get(platform_id="2").parent == Comment.objects.get(platform_id="1")


def test_posts_published_before_the_inbox_get_a_schedule_from_its_migration(workspace_a):
    import importlib

    from django.apps import apps as registry

    fill = importlib.import_module("apps.inbox.migrations.0002_read_schedules_of_recent_posts")
    recent, _post = live_post(workspace_a, handle="recent")
    old, _post = live_post(workspace_a, handle="old")
    old.published_at = timezone.now() - timedelta(days=100)
    old.save(update_fields=["published_at"])

    fill.fill(registry, None)

    assert list(CommentSync.objects.values_list("rendition_id", flat=True)) == [recent.pk]


def test_a_reconnected_account_reads_again_what_was_unavailable(
    workspace_a, django_capture_on_commit_callbacks
):
    from apps.common import events as domain_events

    rendition, _post = live_post(workspace_a)
    sync = sync_start(rendition)
    CommentSync.objects.filter(pk=sync.pk).update(unavailable="No permission.", next_read_at=None)

    with django_capture_on_commit_callbacks(execute=True):
        domain_events.emit(domain_events.ACCOUNT_CONNECTED, account=rendition.social_account)

    sync.refresh_from_db()
    assert sync.unavailable == "" and sync.next_read_at is not None

"""The inbox pages: filters and the live list, the thread, and what each role may do there
(viewers read, editors reply and act, admins approve held replies); other workspaces' ids
are 404."""

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.inbox.models import Comment, Reply
from apps.inbox.services import inbox_settings_update
from apps.jobs.models import Job
from tests.factories import RenditionFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db


def _comment(workspace, platform="facebook", text="Open on Sunday?", **fields) -> Comment:
    account = SocialAccountFactory(workspace=workspace, platform=platform)
    rendition = RenditionFactory(
        publication__workspace=workspace,
        social_account=account,
        status="published",
        provider_post_id="p",
        published_at=timezone.now(),
    )
    return Comment.objects.create(
        workspace=workspace,
        rendition=rendition,
        social_account=account,
        platform=platform,
        platform_id=f"c{rendition.pk}",
        text=text,
        commented_at=timezone.now(),
        **fields,
    )


def url(name: str, slug: str = "ws-a", **kwargs) -> str:
    return reverse(name, kwargs={"workspace_slug": slug, **kwargs})


def test_the_page_filters_and_its_live_list_is_a_fragment(as_vera, workspace_a, bob):
    mine = _comment(workspace_a, text="Assigned one", assignee=bob)
    other = _comment(workspace_a, platform="sandbox", text="On the sandbox")

    page = as_vera.get(url("inbox")).content.decode()
    filtered = as_vera.get(url("inbox") + "?platform=sandbox").content.decode()
    fragment = as_vera.get(url("inbox"), HTTP_HX_REQUEST="true").content.decode()

    assert "Assigned one" in page and "On the sandbox" in page and 'hx-trigger="every' in page
    assert "On the sandbox" in filtered and "Assigned one" not in filtered
    assert "<html" not in fragment and f"comment-{mine.pk}" in fragment
    assert f"comment-{other.pk}" in fragment


def test_a_viewer_reads_the_thread_but_cannot_reply_or_act(as_vera, workspace_a):
    comment = _comment(workspace_a)

    page = as_vera.get(url("inbox-thread", pk=comment.pk)).content.decode()
    replied = as_vera.post(url("inbox-reply", pk=comment.pk), {"text": "Hi"})
    done = as_vera.post(url("inbox-done", pk=comment.pk), {"done": "1"})

    assert "Open on Sunday?" in page and 'name="text"' not in page and "Mark done" not in page
    assert (replied.status_code, done.status_code) == (403, 403)
    assert not Reply.objects.exists()


def test_an_editor_replies_marks_done_and_hides(as_bob, workspace_a):
    comment = _comment(workspace_a)

    page = as_bob.get(url("inbox-thread", pk=comment.pk)).content.decode()
    as_bob.post(url("inbox-reply", pk=comment.pk), {"text": "Yes, 9 to 1"})
    as_bob.post(url("inbox-done", pk=comment.pk), {"done": "1"})
    as_bob.post(url("inbox-moderate", pk=comment.pk), {"action": "hide"})

    assert 'name="text"' in page and "Hide on facebook" in page
    assert Reply.objects.get().status == "pending"
    comment.refresh_from_db()
    assert comment.state == "done"
    assert Job.objects.filter(type="inbox.moderate").exists()


def test_a_held_reply_waits_for_the_admin(as_bob, as_alice, workspace_a):
    inbox_settings_update(workspace=workspace_a, replies_need_approval=True)
    comment = _comment(workspace_a)

    as_bob.post(url("inbox-reply", pk=comment.pk), {"text": "Soon"})
    reply = Reply.objects.get()
    refused = as_bob.post(url("inbox-reply-decide", pk=reply.pk), {"approve": "1"})
    shown = as_alice.get(url("inbox-thread", pk=comment.pk)).content.decode()
    as_alice.post(url("inbox-reply-decide", pk=reply.pk), {"approve": "1"})

    assert reply.status == "awaiting_approval" and refused.status_code == 403
    assert "Approve and send" in shown
    reply.refresh_from_db()
    assert reply.status == "pending" and reply.approved_by is not None


def test_another_workspaces_comments_are_404(as_charlie, workspace_a, workspace_b):
    theirs = _comment(workspace_a)
    for method, target in [
        ("get", url("inbox", slug="ws-a")),
        ("get", url("inbox-thread", slug="ws-b", pk=theirs.pk)),
        ("post", url("inbox-reply", slug="ws-b", pk=theirs.pk)),
        ("post", url("inbox-done", slug="ws-b", pk=theirs.pk)),
        ("post", url("inbox-moderate", slug="ws-b", pk=theirs.pk)),
    ]:
        assert getattr(as_charlie, method)(target).status_code == 404, target
    theirs.refresh_from_db()
    assert theirs.state == "open"


def test_an_unknown_reply_can_be_marked_found_from_the_thread(as_bob, workspace_a):
    comment = _comment(workspace_a)
    reply = Reply.objects.create(
        workspace=workspace_a, comment=comment, text="Soon", status="unknown"
    )

    page = as_bob.get(url("inbox-thread", pk=comment.pk)).content.decode()
    as_bob.post(url("inbox-reply-found", pk=reply.pk), {"url": ""})

    assert "I found it: mark sent" in page
    reply.refresh_from_db()
    assert reply.status == "sent"

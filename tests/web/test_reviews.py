"""The approval workflow in the web app: the rule on the Reviews page, the review panel
of a post's page, and each step as the person allowed to take it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.approvals.models import ApprovalRule, Review
from apps.publications.models import Publication
from apps.publishing.services import publication_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(workspace_a, bob, news):
    return publication_create(
        workspace=workspace_a,
        author=bob,
        segments=[{"text": "Needs a look"}],
        destinations=[{"account": news.pk}],
        scheduled_at=timezone.now() + timedelta(days=1),
    )


def _page(client, workspace, publication) -> str:
    return client.get(f"/w/{workspace.slug}/posts/{publication.pk}/").content.decode()


def test_an_admin_sets_the_rule_and_a_viewer_cannot(as_alice, as_vera, workspace_a):
    assert (
        as_vera.post(f"/w/{workspace_a.slug}/reviews/rule/", {"required": "on"}).status_code == 403
    )
    as_alice.post(f"/w/{workspace_a.slug}/reviews/rule/", {"required": "on"})
    assert ApprovalRule.objects.get(workspace=workspace_a).required is True
    page = as_vera.get(f"/w/{workspace_a.slug}/reviews/").content.decode()
    assert "approval before they are scheduled" in page and 'name="required"' not in page


def test_an_editor_submits_and_an_admin_approves_from_the_post_page(
    as_bob, as_alice, workspace_a, draft
):
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    page = _page(as_bob, workspace_a, draft)
    assert "Submit for review" in page and "Approve and schedule" not in page

    as_bob.post(
        f"/w/{workspace_a.slug}/posts/{draft.pk}/review/submit/",
        {"revision": draft.revision, "note": "Please check the link"},
    )
    assert Review.objects.get(publication=draft).state == Review.State.IN_REVIEW
    queue = as_alice.get(f"/w/{workspace_a.slug}/reviews/").content.decode()
    assert "Needs a look" in queue

    page = _page(as_alice, workspace_a, draft)
    assert "Approve and schedule" in page and "Please check the link" in page
    assert "Approve and schedule" not in _page(as_bob, workspace_a, draft)  # not an approver
    refused = as_bob.post(
        f"/w/{workspace_a.slug}/posts/{draft.pk}/review/approve/", {"revision": draft.revision}
    )
    assert refused.status_code == 302
    assert Publication.objects.get(pk=draft.pk).status == Publication.Status.DRAFT

    as_alice.post(
        f"/w/{workspace_a.slug}/posts/{draft.pk}/review/approve/", {"revision": draft.revision}
    )
    assert Publication.objects.get(pk=draft.pk).status == Publication.Status.SCHEDULED
    assert Review.objects.get(publication=draft).state == Review.State.APPROVED


def test_asking_for_changes_without_a_note_says_so_and_keeps_it_in_review(
    as_bob, as_alice, workspace_a, draft
):
    as_bob.post(
        f"/w/{workspace_a.slug}/posts/{draft.pk}/review/submit/", {"revision": draft.revision}
    )
    response = as_alice.post(
        f"/w/{workspace_a.slug}/posts/{draft.pk}/review/changes/",
        {"revision": draft.revision, "note": ""},
        follow=True,
    )
    assert "Say what should change." in response.content.decode()
    assert Review.objects.get(publication=draft).state == Review.State.IN_REVIEW


def test_another_workspaces_post_is_404(as_charlie, workspace_a, draft):
    response = as_charlie.post(
        f"/w/{workspace_a.slug}/posts/{draft.pk}/review/comment/", {"body": "hi"}
    )
    assert response.status_code == 404


def test_an_editor_submits_from_the_composer_when_approval_is_required(as_bob, workspace_a, news):
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    page = as_bob.get(f"/w/{workspace_a.slug}/compose/").content.decode()
    assert 'value="submit_review"' in page and 'value="schedule"' not in page
    tomorrow = timezone.localtime(timezone.now() + timedelta(days=1))
    response = as_bob.post(
        f"/w/{workspace_a.slug}/compose/",
        {
            "op": "submit_review",
            "segment-0-text": "From the composer",
            "segment_count": "1",
            "destinations": [str(news.pk)],
            "date": tomorrow.strftime("%Y-%m-%d"),
            "time": "09:00",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    publication = Publication.objects.get()
    assert publication.status == Publication.Status.DRAFT
    assert publication.review.state == Review.State.IN_REVIEW


def test_queueing_is_gated_like_scheduling(workspace_a, bob, news):
    from apps.common.errors import DomainError
    from apps.planning.services import publication_queue

    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    draft = publication_create(
        workspace=workspace_a,
        author=bob,
        segments=[{"text": "Q"}],
        destinations=[{"account": news.pk}],
    )
    with pytest.raises(DomainError) as refused:
        publication_queue(publication=draft, expected_revision=draft.revision, actor=bob)
    assert refused.value.code == "APPROVAL_REQUIRED"

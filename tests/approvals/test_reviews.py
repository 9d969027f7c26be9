"""The approval workflow through its services: who may schedule when approval is required,
and each step (submit, approve, ask for changes) with its comment, event and email."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from apps.approvals.models import ApprovalRule, Review, ReviewComment
from apps.common.errors import Conflict, DomainError, PermissionDenied, ValidationFailed
from apps.publications.models import Publication
from apps.publishing.services import publication_create, publication_update
from apps.publishing.services.reviews import (
    review_approve,
    review_comment,
    review_request_changes,
    review_submit,
)
from apps.sandbox.services import sandbox_account_create
from apps.webhooks.models import WebhookEvent
from apps.webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def rule(workspace_a):
    return ApprovalRule.objects.create(workspace=workspace_a, required=True)


@pytest.fixture
def account(workspace_a):
    return sandbox_account_create(workspace=workspace_a, handle="reviewed")


def _draft(workspace, author, account, hours=3):
    return publication_create(
        workspace=workspace,
        author=author,
        segments=[{"text": "Launch day"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now() + timedelta(hours=hours),
    )


def test_an_editor_cannot_schedule_when_approval_is_required(rule, workspace_a, bob, account):
    with pytest.raises(DomainError) as refused:
        publication_create(
            workspace=workspace_a,
            author=bob,
            segments=[{"text": "Straight out"}],
            destinations=[{"account": account.pk}],
            status="scheduled",
        )
    assert refused.value.code == "APPROVAL_REQUIRED" and refused.value.http_status == 403
    assert not Publication.objects.exists()  # nothing stored

    draft = _draft(workspace_a, bob, account)
    with pytest.raises(DomainError) as again:
        publication_update(
            publication=draft, expected_revision=draft.revision, actor=bob, status="scheduled"
        )
    assert again.value.code == "APPROVAL_REQUIRED"
    draft.refresh_from_db()
    assert draft.status == Publication.Status.DRAFT


def test_admins_schedule_directly_and_without_the_rule_editors_do_too(
    workspace_a, alice, bob, account
):
    ApprovalRule.objects.create(workspace=workspace_a, required=False)
    assert _schedule(workspace_a, bob, account).status == Publication.Status.SCHEDULED
    ApprovalRule.objects.filter(workspace=workspace_a).update(required=True)
    assert _schedule(workspace_a, alice, account).status == Publication.Status.SCHEDULED


def _schedule(workspace, author, account):
    return publication_create(
        workspace=workspace,
        author=author,
        segments=[{"text": "Now"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now() + timedelta(hours=1),
        status="scheduled",
    )


def test_submit_then_approve_schedules_it_and_tells_each_side(
    rule, workspace_a, alice, bob, account, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    webhook_endpoint_create(workspace=workspace_a, url="https://127.0.0.1/in")
    draft = _draft(workspace_a, bob, account)

    with django_capture_on_commit_callbacks(execute=True):  # emails go out on commit
        review = review_submit(
            publication=draft, expected_revision=draft.revision, actor=bob, note="Ready?"
        )
    assert review.state == Review.State.IN_REVIEW
    assert [m.to for m in mail.outbox] == [[alice.email]]
    assert "Ready?" in mail.outbox[0].body and "/posts/" in mail.outbox[0].body

    draft.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        review_approve(publication=draft, expected_revision=draft.revision, actor=alice, note="Go")
    draft.refresh_from_db()
    assert draft.status == Publication.Status.SCHEDULED
    assert draft.review.state == Review.State.APPROVED and draft.review.decided_by == alice
    assert mail.outbox[-1].to == [bob.email] and "approved" in mail.outbox[-1].subject
    kinds = list(ReviewComment.objects.order_by("pk").values_list("kind", "body"))
    assert kinds == [("submitted", "Ready?"), ("approved", "Go")]
    types = list(WebhookEvent.objects.order_by("pk").values_list("type", flat=True))
    assert "publication.review_requested" in types and "publication.approved" in types


def test_only_an_admin_decides_and_asking_for_changes_needs_a_note(
    rule, workspace_a, alice, bob, account, django_capture_on_commit_callbacks
):
    draft = _draft(workspace_a, bob, account)
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob)
    draft.refresh_from_db()
    with pytest.raises(PermissionDenied):
        review_approve(publication=draft, expected_revision=draft.revision, actor=bob)
    with pytest.raises(ValidationFailed):
        review_request_changes(
            publication=draft, expected_revision=draft.revision, actor=alice, note=" "
        )
    with django_capture_on_commit_callbacks(execute=True):
        review_request_changes(
            publication=draft, expected_revision=draft.revision, actor=alice, note="Shorter, please"
        )
    draft.refresh_from_db()
    assert draft.review.state == Review.State.CHANGES_REQUESTED
    assert draft.status == Publication.Status.DRAFT
    assert mail.outbox[-1].to == [bob.email] and "Shorter, please" in mail.outbox[-1].body

    # Edited and submitted again: back in review.
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob)
    draft.refresh_from_db()
    assert draft.review.state == Review.State.IN_REVIEW


def test_a_stale_revision_and_a_second_submit_are_refused(rule, workspace_a, bob, alice, account):
    draft = _draft(workspace_a, bob, account)
    with pytest.raises(Conflict) as stale:
        review_submit(publication=draft, expected_revision=draft.revision + 1, actor=bob)
    assert stale.value.code == "REVISION_CONFLICT"
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob)
    draft.refresh_from_db()
    with pytest.raises(Conflict) as twice:
        review_submit(publication=draft, expected_revision=draft.revision, actor=bob)
    assert twice.value.code == "ALREADY_IN_REVIEW"
    # The author edits while it is in review: the approver's stale revision is refused.
    publication_update(
        publication=draft, expected_revision=draft.revision, segments=[{"text": "Launch!"}]
    )
    with pytest.raises(Conflict) as changed:
        review_approve(publication=draft, expected_revision=draft.revision, actor=alice)
    assert changed.value.code == "REVISION_CONFLICT"


def test_approval_is_refused_as_scheduling_would_be_and_the_review_waits(
    rule, workspace_a, alice, bob, account
):
    draft = _draft(workspace_a, bob, account)
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob)
    # The review took long: the post's time has passed.
    Publication.objects.filter(pk=draft.pk).update(scheduled_at=timezone.now() - timedelta(hours=2))
    draft.refresh_from_db()
    with pytest.raises(ValidationFailed) as past:
        review_approve(publication=draft, expected_revision=draft.revision, actor=alice)
    assert past.value.code == "SCHEDULE_IN_PAST"
    draft.refresh_from_db()
    assert draft.review.state == Review.State.IN_REVIEW
    later = (timezone.now() + timedelta(days=1)).isoformat()
    review_approve(
        publication=draft, expected_revision=draft.revision, actor=alice, scheduled_at=later
    )
    draft.refresh_from_db()
    assert draft.status == Publication.Status.SCHEDULED


def test_comments_are_kept_and_empty_ones_refused(workspace_a, bob, account):
    draft = _draft(workspace_a, bob, account)
    with pytest.raises(ValidationFailed):
        review_comment(publication=draft, actor=bob, body="   ")
    review_comment(publication=draft, actor=bob, body="Image credit?")
    assert ReviewComment.objects.get().body == "Image credit?"

"""What governs publishing is in the audit log: the approval rule switched on or off, and
each review step (submitted, approved with the revision and hash it approved, changes
requested), attributed to the person or token that acted."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts import services
from apps.approvals.models import ApprovalRule, Review
from apps.audit.models import AuditEvent
from apps.publishing.services import publication_create
from apps.publishing.services.reviews import (
    review_approve,
    review_request_changes,
    review_submit,
)
from apps.sandbox.services import sandbox_account_create

pytestmark = pytest.mark.django_db


def only(action: str) -> AuditEvent:
    found = list(AuditEvent.objects.filter(action=action))
    assert len(found) == 1, [str(e) for e in found]
    return found[0]


@pytest.fixture
def draft(workspace_a, bob):
    account = sandbox_account_create(workspace=workspace_a, handle="reviewed")
    return publication_create(
        workspace=workspace_a,
        author=bob,
        segments=[{"text": "For review"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now() + timedelta(hours=3),
    )


def test_switching_the_rule_on_the_web_is_recorded_with_who_did_it(alice, workspace_a):
    client = Client(REMOTE_ADDR="203.0.113.7")
    client.force_login(alice)

    client.post("/w/ws-a/reviews/rule/", {"required": "on"})
    client.post("/w/ws-a/reviews/rule/", {"required": "on"})  # no change: no event

    event = only("approval.rule_changed")
    assert (event.actor_user, event.workspace, event.metadata) == (
        alice,
        workspace_a,
        {"required": True},
    )
    assert (event.target_type, event.target_id) == ("workspace", str(workspace_a.pk))


def test_switching_the_rule_off_through_the_api_records_the_token(alice, workspace_a):
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    issued = services.api_token_create(
        workspace=workspace_a, name="ops", scopes=["read", "admin"], created_by=alice
    )
    client = APIClient(REMOTE_ADDR="198.51.100.4")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.clear}")

    assert (
        client.put("/api/v1/approval-rule", {"required": False}, format="json").status_code == 200
    )

    event = only("approval.rule_changed")
    assert event.actor_token == issued.token and event.metadata == {"required": False}


def test_each_review_step_is_recorded(draft, alice, bob):
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob, note="Please")
    review_request_changes(
        publication=draft, expected_revision=draft.revision, actor=alice, note="Shorter"
    )
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob)
    review_approve(publication=draft, expected_revision=draft.revision, actor=alice)

    assert AuditEvent.objects.filter(action="review.submitted").count() == 2
    asked = only("review.changes_requested")
    assert asked.metadata == {"note": "Shorter"}
    assert (asked.target_type, asked.target_id) == ("publication", str(draft.pk))
    approved = only("review.approved")
    review = Review.objects.get(publication=draft)
    assert approved.metadata == {
        "revision": review.approved_revision,
        "content_hash": review.approved_hash,
    }
    assert len(review.approved_hash) == 64

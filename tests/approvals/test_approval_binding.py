"""Approval is bound to what was approved: once an admin approves an editor's post, the
editor cannot change its content, media, destinations, first comment or time while it is
scheduled, by any path (the API's PATCH, the web composer, the calendar's drag, the
reschedule form, the queue's swap, the MCP tools). Each refusal is APPROVAL_REQUIRED and
writes nothing; an admin's edit goes through, and so does taking the post back to draft."""

from datetime import UTC, datetime, time

import pytest
from django.test import Client

from apps.accounts import services as account_services
from apps.approvals.models import ApprovalRule, Review
from apps.audit.models import AuditEvent
from apps.common.errors import DomainError
from apps.planning.services import (
    publication_queue,
    queue_slots_replace,
    queue_swap,
    queued_publication_create,
)
from apps.publications.models import Publication
from apps.publishing.services import publication_reschedule, publication_update
from apps.publishing.services.approval import approval_hash, approval_parts
from apps.publishing.services.publications import publication_create
from apps.publishing.services.reviews import review_approve, review_submit
from apps.renditions.models import Rendition
from apps.sandbox.services import sandbox_account_create
from apps.web.composer.destination_retry import destination_edit_and_retry
from tests.api.helpers import bearer, error
from tests.mcp.test_tools import code, context

pytestmark = pytest.mark.django_db

AT = datetime(2030, 1, 7, 8, 30, tzinfo=UTC)  # 09:30 in Warsaw


@pytest.fixture(autouse=True)
def _keep_the_test_transaction(monkeypatch):
    from apps.api.mcp import tools

    monkeypatch.setattr(tools, "close_old_connections", lambda: None)


@pytest.fixture
def account(workspace_a):
    return sandbox_account_create(workspace=workspace_a, handle="reviewed")


@pytest.fixture
def other_account(workspace_a):
    return sandbox_account_create(workspace=workspace_a, handle="second")


@pytest.fixture
def approved(workspace_a, alice, bob, account):
    """Bob's (an editor's) post, submitted and approved by alice (the owner): scheduled."""
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    draft = publication_create(
        workspace=workspace_a,
        author=bob,
        segments=[{"text": "Approved words"}],
        destinations=[{"account": account.pk}],
        scheduled_at=AT,
    )
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob)
    review_approve(publication=draft, expected_revision=draft.revision, actor=alice)
    draft.refresh_from_db()
    assert draft.status == Publication.Status.SCHEDULED
    return draft


def _token(user, workspace):
    return account_services.api_token_create(
        workspace=workspace,
        name=f"t-{user.pk}",
        scopes=["read", "write", "publish", "admin", "mcp"],
        created_by=user,
    )


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _unchanged(publication: Publication) -> None:
    before = publication.revision
    publication.refresh_from_db()
    assert publication.revision == before
    assert publication.status == Publication.Status.SCHEDULED
    assert publication.scheduled_at == AT
    assert list(publication.segments.values_list("text", flat=True)) == ["Approved words"]


# --- what a review records ----------------------------------------------------------------


def test_an_approval_records_the_revision_and_content_hash_it_approved(approved):
    review = Review.objects.get(publication=approved)

    assert review.approved_revision == approved.revision
    assert review.approved_hash == approval_hash(approval_parts(approved))
    event = AuditEvent.objects.get(action="review.approved")
    assert event.metadata["revision"] == approved.revision
    assert event.metadata["content_hash"] == review.approved_hash


def test_the_hash_moves_with_each_part_it_covers(approved, alice, other_account):
    before = approval_parts(approved)
    moved = publication_update(
        publication=approved,
        expected_revision=approved.revision,
        actor=alice,
        destinations=[{"account": approved.renditions.get().social_account_id}],
        first_comment="More below",
    )
    after = approval_parts(moved)
    assert [part for part in before if before[part] != after[part]] == ["first_comment"]


# --- the services, every client's way in --------------------------------------------------


def test_the_author_cannot_change_the_text_of_the_approved_post(approved, bob):
    with pytest.raises(DomainError) as refused:
        publication_update(
            publication=approved,
            expected_revision=approved.revision,
            actor=bob,
            segments=[{"text": "Something else entirely"}],
        )
    assert refused.value.code == "APPROVAL_REQUIRED" and refused.value.http_status == 403
    assert list(refused.value.details["changed"]) == ["content"]
    _unchanged(approved)


def test_adding_a_destination_is_a_change_of_destinations(approved, bob, account, other_account):
    with pytest.raises(DomainError) as refused:
        publication_update(
            publication=approved,
            expected_revision=approved.revision,
            actor=bob,
            destinations=[{"account": account.pk}, {"account": other_account.pk}],
        )
    assert list(refused.value.details["changed"]) == ["destinations"]
    assert approved.renditions.count() == 1
    _unchanged(approved)


def test_the_first_comment_and_the_time_are_covered_too(approved, bob):
    for changes, part in (
        ({"first_comment": "Link in here"}, "first_comment"),
        ({"scheduled_at": "2030-01-08T08:30:00Z"}, "time"),
    ):
        with pytest.raises(DomainError) as refused:
            publication_update(
                publication=approved, expected_revision=approved.revision, actor=bob, **changes
            )
        assert list(refused.value.details["changed"]) == [part]
    with pytest.raises(DomainError):
        publication_reschedule(
            publication=approved,
            expected_revision=approved.revision,
            scheduled_at="2030-01-08T08:30:00Z",
            actor=bob,
        )
    _unchanged(approved)


def test_an_edit_that_changes_nothing_passes(approved, bob, account):
    saved = publication_update(
        publication=approved,
        expected_revision=approved.revision,
        actor=bob,
        segments=[{"text": "Approved words"}],
        destinations=[{"account": account.pk}],
        scheduled_at=AT.isoformat(),
    )
    assert saved.status == Publication.Status.SCHEDULED


def test_the_author_may_take_it_back_to_draft_and_must_submit_it_again(approved, bob):
    withdrawn = publication_update(
        publication=approved,
        expected_revision=approved.revision,
        actor=bob,
        status="draft",
        segments=[{"text": "Second thoughts"}],
    )
    assert withdrawn.status == Publication.Status.DRAFT
    with pytest.raises(DomainError) as refused:
        publication_update(
            publication=withdrawn,
            expected_revision=withdrawn.revision,
            actor=bob,
            status="scheduled",
        )
    assert refused.value.code == "APPROVAL_REQUIRED"


def test_an_admin_changes_the_approved_post(approved, alice):
    saved = publication_update(
        publication=approved,
        expected_revision=approved.revision,
        actor=alice,
        segments=[{"text": "Polished by an admin"}],
    )
    assert saved.status == Publication.Status.SCHEDULED
    assert saved.revision == Review.objects.get(publication=approved).approved_revision + 1


def test_without_the_rule_an_editor_edits_scheduled_posts(approved, bob, workspace_a):
    ApprovalRule.objects.filter(workspace=workspace_a).update(required=False)
    saved = publication_update(
        publication=approved,
        expected_revision=approved.revision,
        actor=bob,
        segments=[{"text": "Free again"}],
    )
    assert saved.segments.get().text == "Free again"


# --- each client --------------------------------------------------------------------------


def test_the_api_patch_of_the_editors_token_is_refused_and_the_admins_is_not(
    approved, alice, bob, workspace_a
):
    editor = bearer(_token(bob, workspace_a).clear)
    url = f"/api/v1/publications/{approved.pk}"

    refused = editor.patch(
        url, {"revision": approved.revision, "text": "Sneaky edit"}, format="json"
    )
    assert refused.status_code == 403, refused.content
    assert error(refused)["code"] == "APPROVAL_REQUIRED"
    assert error(refused)["details"]["changed"] == ["content"]
    _unchanged(approved)

    admin = bearer(_token(alice, workspace_a).clear)
    done = admin.patch(url, {"revision": approved.revision, "text": "Admin edit"}, format="json")
    assert done.status_code == 200, done.content
    assert done.json()["status"] == "scheduled"


def test_the_web_composer_edit_is_refused_with_the_reason(approved, bob, account):
    response = _client(bob).post(
        f"/w/ws-a/posts/{approved.pk}/edit/",
        {
            "segment_count": "1",
            "segment-0-text": "Changed in the composer",
            "destinations": [str(account.pk)],
            "op": "schedule",
            "revision": str(approved.revision),
            "date": "2030-01-07",
            "time": "08:30",
        },
    )
    assert response.status_code == 403
    assert "needs an admin&#x27;s approval" in response.content.decode()
    _unchanged(approved)


def test_the_calendar_drag_is_refused_for_the_editor_and_done_for_the_admin(approved, alice, bob):
    move = {"date": "2030-01-10", "time": "09:30", "revision": approved.revision}
    url = f"/w/ws-a/calendar/move/{approved.pk}/"

    refused = _client(bob).post(url, move)
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "APPROVAL_REQUIRED"
    _unchanged(approved)

    assert _client(alice).post(url, move).status_code == 200
    approved.refresh_from_db()
    assert approved.scheduled_at != AT


def test_the_reschedule_form_is_refused_for_the_editor(approved, bob):
    response = _client(bob).post(
        f"/w/ws-a/posts/{approved.pk}/reschedule/",
        {"date": "2030-01-10", "time": "09:30", "revision": approved.revision},
    )
    assert response.status_code == 400
    _unchanged(approved)


def test_the_mcp_tools_refuse_the_editors_token(approved, bob, workspace_a):
    ctx = context(_token(bob, workspace_a).token)

    moved = tools_call("reschedule_publication", ctx, approved, local_time="2030-01-10T09:30")
    assert code(moved) == "APPROVAL_REQUIRED"
    _unchanged(approved)


def tools_call(name, ctx, publication, **arguments):
    from apps.api.mcp import tools

    return getattr(tools, name)(
        ctx, publication_id=publication.pk, revision=publication.revision, **arguments
    )


def test_a_queue_swap_by_the_editor_is_refused(workspace_a, alice, bob, account):
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    queue_slots_replace(workspace=workspace_a, slots=[(0, time(9)), (0, time(12))], timezone="UTC")
    first, second = (
        queued_publication_create(
            workspace=workspace_a,
            author=alice,
            segments=[{"text": text}],
            destinations=[{"account": account.pk}],
        )
        for text in ("First", "Second")
    )
    one, two = (Rendition.objects.get(publication=p) for p in (first, second))
    times = (first.scheduled_at, second.scheduled_at)

    with pytest.raises(DomainError) as refused:
        queue_swap(
            first=one,
            first_revision=first.revision,
            second=two,
            second_revision=second.revision,
            actor=bob,
        )
    assert refused.value.code == "APPROVAL_REQUIRED"
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.scheduled_at, second.scheduled_at) == times

    queue_swap(
        first=one,
        first_revision=first.revision,
        second=two,
        second_revision=second.revision,
        actor=alice,
    )
    first.refresh_from_db()
    assert first.scheduled_at == times[1]


def test_add_to_queue_of_the_approved_post_is_refused(approved, workspace_a, bob):
    """The service behind "Add to queue", POST /publications/{id}/queue and the MCP tool
    queue_publication: it moves the post's time."""
    queue_slots_replace(workspace=workspace_a, slots=[(0, time(9))], timezone="UTC")

    with pytest.raises(DomainError) as refused:
        publication_queue(publication=approved, expected_revision=approved.revision, actor=bob)
    assert refused.value.code == "APPROVAL_REQUIRED"
    assert list(refused.value.details["changed"]) == ["time"]
    _unchanged(approved)


def test_editing_and_retrying_a_failed_destination_is_refused(approved, bob):
    rendition = approved.renditions.get()
    Rendition.objects.filter(pk=rendition.pk).update(status=Rendition.Status.FAILED)
    Publication.objects.filter(pk=approved.pk).update(status=Publication.Status.FAILED)
    rendition.refresh_from_db()

    with pytest.raises(DomainError) as refused:
        destination_edit_and_retry(
            rendition=rendition,
            texts=["A different text"],
            expected_revision=approved.revision,
            user=bob,
        )
    assert refused.value.code == "APPROVAL_REQUIRED"
    assert list(refused.value.details["changed"]) == ["content"]
    assert list(approved.segments.values_list("text", flat=True)) == ["Approved words"]
    rendition.refresh_from_db()
    assert rendition.status == Rendition.Status.FAILED


def test_the_post_page_says_what_was_approved_and_who_may_change_it(approved, alice, bob):
    url = f"/w/ws-a/posts/{approved.pk}/"
    as_bob = _client(bob).get(url).content.decode()
    assert f"Approved as revision {approved.revision}." in as_bob
    assert 'id="review-bound"' in as_bob

    publication_update(
        publication=approved,
        expected_revision=approved.revision,
        actor=alice,
        segments=[{"text": "Polished by an admin"}],
    )
    as_alice = _client(alice).get(url).content.decode()
    assert f"changed since by an admin (now revision {approved.revision + 1})" in as_alice
    assert 'id="review-bound"' not in as_alice

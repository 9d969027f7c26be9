"""A media file's default alt text is part of every post that attaches the file with no
alt text of its own. While the approval rule is on, an editor cannot change it under a post
past draft, on any path that edits it (the web media library, the API's PATCH /media/{id}):
APPROVAL_REQUIRED, nothing written, as editing those posts would be. An admin's change goes
through and is audited on each post it touched."""

from datetime import UTC, datetime

import pytest
from django.test import Client

from apps.accounts import services as account_services
from apps.approvals.models import ApprovalRule
from apps.audit.models import AuditEvent
from apps.publications.models import MediaAsset, Publication
from apps.publishing.services.publications import publication_create
from apps.publishing.services.reviews import review_approve, review_submit
from apps.sandbox.services import sandbox_account_create
from tests.api.helpers import bearer, error
from tests.factories import MediaAssetFactory

pytestmark = pytest.mark.django_db

AT = datetime(2030, 1, 7, 8, 30, tzinfo=UTC)
URL = "/w/ws-a/media/"


@pytest.fixture
def asset(workspace_a):
    return MediaAssetFactory(workspace=workspace_a, alt_text="A red bicycle")


@pytest.fixture
def account(workspace_a):
    return sandbox_account_create(workspace=workspace_a, handle="reviewed")


def _post(workspace, author, account, media, *, scheduled_at=AT):
    return publication_create(
        workspace=workspace,
        author=author,
        segments=[{"text": "Look", "media": media}],
        destinations=[{"account": account.pk}],
        scheduled_at=scheduled_at,
    )


@pytest.fixture
def approved(workspace_a, alice, bob, account, asset):
    """Bob's (an editor's) post, approved by alice: scheduled, its image with no alt text of
    its own, so it shows the file's."""
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    draft = _post(workspace_a, bob, account, [{"id": asset.pk}])
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob)
    review_approve(publication=draft, expected_revision=draft.revision, actor=alice)
    draft.refresh_from_db()
    assert draft.status == Publication.Status.SCHEDULED
    return draft


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _alt(asset) -> str:
    return MediaAsset.objects.get(pk=asset.pk).alt_text


def test_the_library_refuses_the_editor_under_an_approved_post(approved, asset, bob):
    response = _client(bob).post(
        f"{URL}{asset.pk}/alt-text/", {"alt_text": "A blue bicycle"}, HTTP_HX_REQUEST="true"
    )

    assert response.status_code == 403
    assert "needs an admin&#x27;s approval" in response.content.decode()
    assert _alt(asset) == "A red bicycle"
    assert not AuditEvent.objects.filter(action="media.alt_text_changed").exists()


def test_the_api_refuses_the_editors_token_under_an_approved_post(
    approved, asset, bob, workspace_a
):
    token = account_services.api_token_create(
        workspace=workspace_a, name="bob", scopes=["read", "write", "publish"], created_by=bob
    )

    response = bearer(token.clear).patch(
        f"/api/v1/media/{asset.pk}", {"alt_text": "A blue bicycle"}, format="json"
    )

    assert response.status_code == 403
    body = error(response)
    assert body["code"] == "APPROVAL_REQUIRED"
    assert body["details"]["publications"] == [approved.pk]
    assert body["details"]["changed"] == ["media"]
    assert _alt(asset) == "A red bicycle"


def test_an_admins_change_goes_through_and_is_audited_on_the_post(approved, asset, alice):
    response = _client(alice).post(f"{URL}{asset.pk}/alt-text/", {"alt_text": "A blue bicycle"})

    assert response.status_code == 302
    assert _alt(asset) == "A blue bicycle"
    event = AuditEvent.objects.get(action="media.alt_text_changed")
    assert event.target_id == str(approved.pk) and event.actor_user == alice
    assert event.metadata["previous"] == "A red bicycle"
    assert event.metadata["alt_text"] == "A blue bicycle"
    assert event.metadata["media"] == asset.pk


def test_a_post_with_its_own_alt_text_or_a_draft_does_not_hold_the_editor(
    workspace_a, alice, bob, account, asset
):
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    own = _post(workspace_a, bob, account, [{"id": asset.pk, "alt_text": "Bob's own words"}])
    review_submit(publication=own, expected_revision=own.revision, actor=bob)
    review_approve(publication=own, expected_revision=own.revision, actor=alice)
    _post(workspace_a, bob, account, [{"id": asset.pk}])  # a draft

    response = _client(bob).post(f"{URL}{asset.pk}/alt-text/", {"alt_text": "A blue bicycle"})

    assert response.status_code == 302
    assert _alt(asset) == "A blue bicycle"
    assert not AuditEvent.objects.filter(action="media.alt_text_changed").exists()


def test_without_the_rule_the_editor_changes_it_and_it_is_audited(
    approved, asset, bob, workspace_a
):
    ApprovalRule.objects.filter(workspace=workspace_a).update(required=False)

    response = _client(bob).post(f"{URL}{asset.pk}/alt-text/", {"alt_text": "A blue bicycle"})

    assert response.status_code == 302
    assert _alt(asset) == "A blue bicycle"
    assert AuditEvent.objects.get(action="media.alt_text_changed").actor_user == bob


def test_sending_the_same_text_back_passes(approved, asset, bob):
    response = _client(bob).post(f"{URL}{asset.pk}/alt-text/", {"alt_text": "A red bicycle"})

    assert response.status_code == 302
    assert _alt(asset) == "A red bicycle"


def test_a_post_published_in_full_does_not_hold_the_editor(approved, asset, bob):
    # It sends nothing more, so its old default changes nothing that goes out.
    Publication.objects.filter(pk=approved.pk).update(status=Publication.Status.PUBLISHED)

    response = _client(bob).post(f"{URL}{asset.pk}/alt-text/", {"alt_text": "A blue bicycle"})

    assert response.status_code == 302
    assert _alt(asset) == "A blue bicycle"


def test_the_destinations_still_to_send_carry_the_new_default(approved, asset, alice):
    # Destinations are written with the alt text they send: the new default replaces the
    # old one there, so what goes out is what the post's page shows; what went out stays.
    from apps.renditions.models import RenditionMedia

    sent = _post(approved.workspace, alice, approved.renditions.get().social_account, [])
    sent_rendition = sent.renditions.get()
    segment = sent_rendition.segments.get()
    RenditionMedia.objects.create(
        rendition_segment=segment, media=asset, position=0, alt_text="A red bicycle"
    )
    segment.provider_post_id = "already-out"
    segment.save(update_fields=["provider_post_id"])

    _client(alice).post(f"{URL}{asset.pk}/alt-text/", {"alt_text": "A blue bicycle"})

    waiting = RenditionMedia.objects.get(rendition_segment__rendition__publication=approved)
    assert waiting.alt_text == "A blue bicycle"
    assert RenditionMedia.objects.get(rendition_segment=segment).alt_text == "A red bicycle"

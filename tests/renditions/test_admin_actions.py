"""The operators' actions on renditions: retry, resolve, cancel, and the attempts log."""

from django.urls import reverse

from tests.factories import RenditionFactory, RenditionSegmentFactory

UNKNOWN = {"kind": "outcome_unknown", "message": "No answer.", "action": "verify"}


def _ambiguous():
    rendition = RenditionFactory(status="failed", ambiguous=True, last_error=UNKNOWN)
    RenditionSegmentFactory(rendition=rendition, position=0)
    return rendition


def test_attempt_changelist_and_rendition_page_render(admin_client, db):
    rendition = _ambiguous()
    rendition.delivery_attempts.create(workspace=rendition.workspace, kind="publish")
    assert (
        admin_client.get(reverse("admin:renditions_deliveryattempt_changelist")).status_code == 200
    )
    page = admin_client.get(reverse("admin:renditions_rendition_change", args=[rendition.pk]))
    assert page.status_code == 200
    assert b"Resolve unknown outcome" in page.content


def test_resolve_view_records_a_published_post(admin_client, db):
    rendition = _ambiguous()
    url = reverse("admin:renditions_rendition_resolve", args=[rendition.pk])
    assert admin_client.get(url).status_code == 200
    response = admin_client.post(
        url, {"outcome": "published", "provider_url": "https://m.test/@a/1"}
    )
    assert response.status_code == 302
    rendition.refresh_from_db()
    assert (rendition.status, rendition.provider_url) == ("published", "https://m.test/@a/1")


def test_resolve_view_shows_a_refusal(admin_client, db):
    rendition = RenditionFactory(status="scheduled")
    url = reverse("admin:renditions_rendition_resolve", args=[rendition.pk])
    response = admin_client.post(url, {"outcome": "failed"})
    assert response.status_code == 200
    assert b"unknown outcome can be resolved" in response.content


def test_retry_action(admin_client, db):
    rendition = RenditionFactory(
        status="failed", last_error={"kind": "content_rejected", "message": "x"}
    )
    changelist = reverse("admin:renditions_rendition_changelist")
    admin_client.post(changelist, {"action": "retry", "_selected_action": [rendition.pk]})
    rendition.refresh_from_db()
    assert rendition.status == "scheduled"


def test_resolve_actions_and_refusals_are_reported(admin_client, db):
    rendition = _ambiguous()
    other = RenditionFactory(status="scheduled")
    changelist = reverse("admin:renditions_rendition_changelist")
    response = admin_client.post(
        changelist,
        {"action": "resolve_failed", "_selected_action": [rendition.pk, other.pk]},
        follow=True,
    )
    rendition.refresh_from_db()
    assert rendition.ambiguous is False
    assert b"unknown outcome can be resolved" in response.content


def test_cancel_action(admin_client, db):
    rendition = RenditionFactory(status="scheduled")
    changelist = reverse("admin:renditions_rendition_changelist")
    admin_client.post(changelist, {"action": "cancel", "_selected_action": [rendition.pk]})
    rendition.refresh_from_db()
    assert rendition.status == "cancelled"

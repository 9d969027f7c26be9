import pytest
from django.utils import timezone

from apps.renditions.models import DeliveryAttempt, Rendition, normalize_error
from tests.api.helpers import error
from tests.factories import PublicationFactory, RenditionFactory, RenditionSegmentFactory


@pytest.fixture
def ambiguous(workspace_a):
    publication = PublicationFactory(workspace=workspace_a, status="failed")
    rendition = RenditionFactory(
        publication=publication,
        status="failed",
        ambiguous=True,
        attempts=1,
        last_error=normalize_error({"kind": "timeout_after_send", "message": "No answer."}),
    )
    RenditionSegmentFactory(rendition=rendition)
    return rendition


def url(rendition) -> str:
    return f"/api/v1/renditions/{rendition.pk}"


def test_it_shows_one_rendition(api_a, ambiguous):
    response = api_a.get(url(ambiguous))
    assert response.status_code == 200
    assert response.json()["ambiguous"] is True
    assert response.json()["publication"] == ambiguous.publication_id


def test_resolving_as_published_records_the_post_and_the_evidence(api_a, ambiguous):
    response = api_a.post(
        f"{url(ambiguous)}/resolve",
        {"outcome": "published", "provider_url": "https://sandbox.example/posts/9"},
    )

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "published"
    assert body["ambiguous"] is False
    assert body["provider_url"] == "https://sandbox.example/posts/9"
    assert body["delivery_attempts"][-1]["kind"] == "resolve"
    assert DeliveryAttempt.objects.filter(rendition=ambiguous, kind="resolve").count() == 1


def test_resolving_as_retry_sends_it_again(api_a, ambiguous):
    response = api_a.post(f"{url(ambiguous)}/resolve", {"outcome": "retry"})
    assert response.status_code == 200
    assert Rendition.objects.get(pk=ambiguous.pk).status == "scheduled"


def test_published_needs_the_posts_url_or_id(api_a, ambiguous):
    response = api_a.post(f"{url(ambiguous)}/resolve", {"outcome": "published"})
    assert response.status_code == 400
    assert "provider_url" in error(response)["details"]


def test_a_rendition_that_is_not_ambiguous_cannot_be_resolved(api_a, workspace_a):
    rendition = RenditionFactory(
        publication=PublicationFactory(workspace=workspace_a),
        status="published",
        published_at=timezone.now(),
    )
    response = api_a.post(f"{url(rendition)}/resolve", {"outcome": "failed"})
    assert response.status_code == 409
    assert error(response)["code"] == "NOT_AMBIGUOUS"


def test_an_unknown_outcome_is_a_validation_error(api_a, ambiguous):
    response = api_a.post(f"{url(ambiguous)}/resolve", {"outcome": "maybe"})
    assert response.status_code == 400
    assert "outcome" in error(response)["details"]

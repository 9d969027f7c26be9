"""The first comment through the API: given on create and edit, checked against each
destination's platform, shown per destination, and settled by a person when it failed."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.publishing.delivery.comment import COMMENT_JOB
from apps.renditions.models import DeliveryAttempt, FirstComment
from tests.api.helpers import error
from tests.factories import PublicationFactory, RenditionFactory, SocialAccountFactory

URL = "/api/v1/publications"


def create(client, **body):
    return client.post(URL, body, format="json")


def test_create_keeps_the_comment_and_shows_it(api_a, sandbox_a):
    response = create(
        api_a, text="Hello", destinations=[{"account": sandbox_a.pk}], first_comment=" Link! "
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["first_comment"] == "Link!"
    assert body["renditions"][0]["first_comment"] is None  # made once the post is live
    assert api_a.get(f"{URL}/{body['id']}").json()["first_comment"] == "Link!"


def test_a_comment_too_long_for_a_destination_is_refused_naming_it(api_a, sandbox_a, workspace_a):
    linkedin = SocialAccountFactory(workspace=workspace_a, platform="linkedin", handle="li")
    response = create(
        api_a,
        text="Hello",
        destinations=[{"account": sandbox_a.pk}, {"account": linkedin.pk}],
        first_comment="y" * 600,
    )

    assert response.status_code == 400
    err = error(response)
    assert err["code"] == "FIRST_COMMENT_TOO_LONG"
    assert err["details"]["first_comment"] == [
        "600 characters is too long for a first comment on sandbox: at most 500."
    ]
    assert not FirstComment.objects.exists()


def test_platforms_without_comments_do_not_limit_it(api_a, workspace_a):
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="xx")
    response = create(api_a, text="Hi", destinations=[{"account": x.pk}], first_comment="z" * 900)
    assert response.status_code == 201, response.json()


def test_an_edit_checks_the_comment_against_the_destinations(api_a, sandbox_a):
    created = create(api_a, text="Hello", destinations=[{"account": sandbox_a.pk}]).json()

    too_long = api_a.patch(
        f"{URL}/{created['id']}", {"revision": 1, "first_comment": "w" * 501}, format="json"
    )
    assert too_long.status_code == 400
    assert error(too_long)["code"] == "FIRST_COMMENT_TOO_LONG"

    edited = api_a.patch(
        f"{URL}/{created['id']}", {"revision": 1, "first_comment": "Read more"}, format="json"
    )
    assert edited.status_code == 200, edited.json()
    assert edited.json()["first_comment"] == "Read more"
    assert edited.json()["revision"] == 2


def test_a_comment_that_is_not_text_is_a_field_error(api_a, sandbox_a):
    response = create(
        api_a, text="Hello", destinations=[{"account": sandbox_a.pk}], first_comment=["no"]
    )
    assert response.status_code == 400
    assert "first_comment" in error(response)["details"]


@pytest.fixture
def failed_comment(workspace_a, sandbox_a):
    publication = PublicationFactory(workspace=workspace_a, first_comment="Hi")
    rendition = RenditionFactory(
        publication=publication,
        workspace=workspace_a,
        social_account=sandbox_a,
        platform="sandbox",
        status="published",
        provider_post_id="p-1",
        provider_url="https://sandbox.example/p/1",
        published_at=timezone.now(),
    )
    return FirstComment.objects.create(
        rendition=rendition,
        workspace=workspace_a,
        text="Hi",
        status="failed",
        last_error={"kind": "content_rejected", "message": "No.", "action": "edit_content"},
    )


def test_a_failed_comment_is_shown_and_retried(api_a, failed_comment):
    rendition_url = f"/api/v1/renditions/{failed_comment.rendition_id}"
    shown = api_a.get(rendition_url).json()["first_comment"]
    assert shown["status"] == "failed"
    assert shown["error"]["kind"] == "content_rejected"

    response = api_a.post(f"{rendition_url}/first-comment/retry")
    assert response.status_code == 200, response.json()
    assert response.json()["first_comment"]["status"] == "pending"
    assert Job.objects.filter(type=COMMENT_JOB, status="pending").count() == 1

    again = api_a.post(f"{rendition_url}/first-comment/retry")
    assert again.status_code == 409
    assert error(again)["code"] == "FIRST_COMMENT_NOT_RETRYABLE"


def test_an_unknown_comment_can_be_marked_posted(api_a, failed_comment):
    failed_comment.move({"failed"}, "unknown")
    url = f"/api/v1/renditions/{failed_comment.rendition_id}/first-comment/mark-posted"

    response = api_a.post(url, {"provider_url": "https://sandbox.example/c/9"}, format="json")

    assert response.status_code == 200, response.json()
    comment = response.json()["first_comment"]
    assert (comment["status"], comment["provider_url"]) == (
        "published",
        "https://sandbox.example/c/9",
    )
    resolve = DeliveryAttempt.objects.get(kind="resolve")
    assert resolve.outcome == "resolved"
    assert api_a.post(url, {}, format="json").status_code == 409


def test_another_workspaces_comment_is_not_found(api_b, failed_comment):
    url = f"/api/v1/renditions/{failed_comment.rendition_id}/first-comment/retry"
    assert api_b.post(url).status_code == 404
    failed_comment.refresh_from_db()
    assert failed_comment.status == "failed"


def test_a_rendition_without_a_comment_answers_404(api_a, workspace_a, sandbox_a):
    rendition = RenditionFactory(workspace=workspace_a, social_account=sandbox_a)
    response = api_a.post(f"/api/v1/renditions/{rendition.pk}/first-comment/retry")
    assert response.status_code == 404
    assert error(response)["code"] == "NO_FIRST_COMMENT"

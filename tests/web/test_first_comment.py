"""The first comment in the web app: written in the composer, checked per destination,
and shown on the post's page with what to do when it did not land."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.publications.models import Publication
from apps.publishing.delivery.comment import COMMENT_JOB
from apps.renditions.models import FirstComment
from tests.factories import PublicationFactory, RenditionFactory, SocialAccountFactory
from tests.web.test_composer import COMPOSE, HTMX, form

pytestmark = pytest.mark.django_db


def test_the_composer_saves_the_first_comment_and_names_who_takes_it(as_alice, news, workspace_a):
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="xacct")
    page = as_alice.post(COMPOSE, form("Hi", destinations=[news, x], op="refresh")).content
    page = page.decode()
    assert 'name="first_comment"' in page
    assert "on Sandbox; X takes no first comment" in page

    day = (timezone.now() + timedelta(days=2)).date().isoformat()
    data = form(
        "Bread",
        destinations=[news],
        op="schedule",
        date=day,
        time="08:00",
        first_comment="Order at https://bakery.example",
    )
    response = as_alice.post(COMPOSE, data, **HTMX)
    assert response.status_code == 200, response.content.decode()[:2000]
    publication = Publication.objects.get()
    assert publication.first_comment == "Order at https://bakery.example"

    edit = as_alice.get(f"/w/ws-a/posts/{publication.pk}/edit/").content.decode()
    assert ">Order at https://bakery.example</textarea>" in edit


def test_a_comment_too_long_is_shown_at_its_field_and_nothing_is_lost(as_alice, news):
    data = form("Bread", destinations=[news], op="save_draft", first_comment="c" * 501)
    response = as_alice.post(COMPOSE, data, **HTMX)
    page = response.content.decode()
    assert response.status_code == 400
    assert '<a href="#first-comment">First comment</a>' in page
    assert "501 characters is too long for a first comment on sandbox: at most 500." in page
    assert ">" + "c" * 501 + "</textarea>" in page
    assert not Publication.objects.exists()


@pytest.fixture
def published(workspace_a, news):
    publication = PublicationFactory(workspace=workspace_a, status="published", first_comment="Hi")
    rendition = RenditionFactory(
        publication=publication,
        workspace=workspace_a,
        social_account=news,
        platform="sandbox",
        status="published",
        provider_post_id="p-1",
        published_at=timezone.now(),
    )
    return rendition


def card_url(rendition, action: str = "") -> str:
    base = f"/w/ws-a/posts/{rendition.publication_id}/destinations/{rendition.pk}/"
    return base + action


def test_a_failed_comment_offers_a_retry_that_queues_it(as_alice, published):
    comment = FirstComment.objects.create(
        rendition=published,
        workspace=published.workspace,
        text="Hi",
        status="failed",
        last_error={"kind": "content_rejected", "message": "This content is not allowed here."},
    )
    page = as_alice.get(card_url(published)).content.decode()
    assert 'data-comment-status="failed"' in page
    assert "This content is not allowed here." in page
    assert "Post the comment again" in page

    response = as_alice.post(card_url(published, "first-comment/retry/"), **HTMX)
    assert response.status_code == 200
    assert "Posting the first comment again." in response.content.decode()
    comment.refresh_from_db()
    assert comment.status == "pending"
    assert Job.objects.filter(type=COMMENT_JOB, status="pending").count() == 1
    assert 'hx-trigger="every 2s"' in response.content.decode()  # shows it land


def test_an_unknown_comment_asks_the_person_to_look_first(as_alice, published):
    comment = FirstComment.objects.create(
        rendition=published, workspace=published.workspace, text="Hi", status="unknown"
    )
    page = as_alice.get(card_url(published)).content.decode()
    assert "Needs attention: unknown outcome" in page
    assert "It is there: mark posted" in page and "It is not there: post it again" in page

    as_alice.post(card_url(published, "first-comment/posted/"))
    comment.refresh_from_db()
    assert comment.status == "published"
    assert comment.provider_comment_id == "confirmed-by-person"


def test_a_viewer_sees_the_comment_but_no_actions(as_vera, published):
    FirstComment.objects.create(
        rendition=published, workspace=published.workspace, text="Hi", status="failed"
    )
    page = as_vera.get(card_url(published)).content.decode()
    assert 'data-comment-status="failed"' in page
    assert "Post the comment again" not in page
    assert as_vera.post(card_url(published, "first-comment/retry/")).status_code == 403

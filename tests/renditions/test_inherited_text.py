"""A destination stores its text only where it overrides the source: renditions that
follow the source read the source segment's text, so the stored bytes do not grow with
the destinations, a source edit reaches the followers (not the overriders, nor what went
out), and publishing sends the source's text."""

import pytest
from django.db import connection
from django.utils import timezone

from apps.publications.models import Publication
from apps.publishing.services import publication_create, publication_update
from apps.renditions.models import Rendition, RenditionSegment
from apps.sandbox.services import sandbox_account_create
from tests.factories import SocialAccountFactory
from tests.renditions.test_pipeline import drain, sandbox, witness, worker  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

LONG = "x" * 5_000


def _stored_text_bytes() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(octet_length(text)), 0) FROM renditions_renditionsegment"
        )
        return cursor.fetchone()[0]


def _create(workspace, accounts, *, override=None, status="draft") -> Publication:
    destinations = [{"account": a.pk} for a in accounts]
    if override is not None:
        destinations[0]["segments"] = [{"text": override}]
    return publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": LONG}, {"text": "second " + LONG}],
        destinations=destinations,
        status=status,
        scheduled_at=timezone.now() if status == "scheduled" else None,
    )


def test_the_stored_text_does_not_grow_with_the_destinations(workspace_a):
    accounts = [
        SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle=f"s{i}")
        for i in range(50)
    ]
    _create(workspace_a, accounts[:5])
    after_five = _stored_text_bytes()
    _create(workspace_a, accounts, override="Only mine")
    after_fifty = _stored_text_bytes()

    assert after_five == 0
    assert after_fifty == len("Only mine")  # the one override, once
    texts = [s.text for s in RenditionSegment.objects.filter(rendition__social_account=accounts[1])]
    assert texts == [LONG, "second " + LONG] * 2  # its rendition in each publication


def test_a_source_edit_reaches_followers_only(workspace_a):
    follower, overrider, gone_out = [
        SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle=f"s{i}")
        for i in range(3)
    ]
    publication = _create(workspace_a, [overrider, follower, gone_out], override="Mine")
    sent = Rendition.objects.get(publication=publication, social_account=gone_out)
    Rendition.objects.filter(pk=sent.pk).update(
        status=Rendition.Status.PUBLISHED, published_at=timezone.now()
    )

    publication_update(
        publication=publication,
        expected_revision=publication.revision,
        segments=[{"text": "Edited"}, {"text": "second " + LONG}],
    )

    def texts(account):
        rendition = Rendition.objects.get(publication=publication, social_account=account)
        return [s.text for s in rendition.segments.order_by("position")]

    assert texts(follower) == ["Edited", "second " + LONG]
    assert texts(overrider) == ["Mine"]
    assert texts(gone_out) == [LONG, "second " + LONG]  # what it published, kept as its own


def test_publishing_sends_the_source_text(workspace_a, sandbox, worker):  # noqa: F811
    account = sandbox_account_create(workspace=workspace_a, handle="follower")
    publication = publication_create(
        workspace=workspace_a,
        author=None,
        segments=[{"text": "From the source"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    assert RenditionSegment.objects.get(rendition__publication=publication).own_text is None

    publication = drain(worker, publication)

    assert publication.status == Publication.Status.PUBLISHED
    assert [post["text"] for post in witness(sandbox, "follower")] == ["From the source"]

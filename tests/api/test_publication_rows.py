"""The list writes each publication straight from its JSON row: byte for byte what
PublicationSerializer writes for the same publication loaded into model instances, for
every kind of row (drafts without a time, a destination's own time and text, inherited
thread text, media alt text from the link or the media, errors, delivery attempts, a live
post's first comment), in UTC and in another current time zone."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.renderers import JSONRenderer

from apps.api.serializers.publication_rows import publication_representations
from apps.api.serializers.publications import PublicationSerializer
from apps.publications.models import Publication
from apps.publishing.selectors import with_publication_read, with_publication_rows
from apps.renditions.models import DeliveryAttempt, FirstComment, Rendition, normalize_error
from tests.api.helpers import later
from tests.factories import PublicationFactory, SocialAccountFactory

URL = "/api/v1/publications"

pytestmark = pytest.mark.django_db


@pytest.fixture
def varied(api_a, workspace_a, media_a):
    """Publications of every shape the list shows, newest first."""
    media_a.alt_text = "The media's own text"
    media_a.save()
    accounts = [
        SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle=f"sandbox{i}")
        for i in range(3)
    ]
    PublicationFactory(workspace=workspace_a, status="draft", scheduled_at=None)
    body = {
        "status": "scheduled",
        "scheduled_at": later(hours=5),
        "first_comment": "Links in the comments",
        "reference_key": "launch-1",
        "segments": [
            {"text": "First", "media": [{"id": media_a.pk, "alt_text": "A red square"}]},
            {"text": "Second", "media": [{"id": media_a.pk}]},
        ],
        "destinations": [
            {"account": accounts[0].pk},
            {"account": accounts[1].pk, "scheduled_at": later(hours=7)},
            {"account": accounts[2].pk, "segments": [{"text": "Own text"}]},
        ],
    }
    created = api_a.post(URL, body, format="json")
    assert created.status_code == 201, created.content
    renditions = Rendition.objects.filter(publication_id=created.json()["id"]).order_by("pk")
    published, failed, _scheduled = renditions
    Rendition.objects.filter(pk=published.pk).update(
        status=Rendition.Status.PUBLISHED,
        published_at=timezone.now().replace(microsecond=0),  # no fraction in the JSON
        provider_post_id="p9",
        provider_url="https://example.test/p9",
    )
    FirstComment.objects.create(
        rendition=published,
        workspace=workspace_a,
        text="Links in the comments",
        status=FirstComment.Status.FAILED,
        last_error={"kind": "permission_missing", "message": "403", "scope": "comments"},
    )
    Rendition.objects.filter(pk=failed.pk).update(
        status=Rendition.Status.FAILED,
        attempts=3,
        ambiguous=True,
        next_retry_at=timezone.now() + timedelta(minutes=3, microseconds=120_000),
        last_error=normalize_error(
            {"kind": "timeout_after_send", "message": "No answer in time.", "retryable": False}
        ),
    )
    started = timezone.now()
    for kind, outcome in (("publish", "unknown"), ("reconcile", "succeeded")):
        DeliveryAttempt.objects.create(
            rendition=failed,
            workspace=workspace_a,
            kind=kind,
            outcome=outcome,
            segment_position=0,
            idempotency_key="key-1",
            error={"kind": "timeout_after_send"} if outcome == "unknown" else None,
            provider_post_id="p1" if outcome == "succeeded" else "",
            note="checked",
            started_at=started,
            finished_at=None if kind == "publish" else started,
        )
    failed.segments.get(position=0).mark_published("p1", "https://example.test/p1")
    PublicationFactory(workspace=workspace_a, status="scheduled", scheduled_at=later(days=2))
    return Publication.objects.filter(workspace=workspace_a).order_by("-pk")


def _written(data) -> bytes:
    return JSONRenderer().render(data)


def _through_models(publications) -> bytes:
    loaded = list(with_publication_read(publications))
    return _written(PublicationSerializer(loaded, many=True).data)


@pytest.mark.parametrize("zone", ["UTC", "America/St_Johns"])
def test_rows_are_written_as_the_serializer_writes_the_models(varied, zone):
    with timezone.override(zone):
        rows = list(with_publication_rows(varied))
        assert len(rows) == 3
        assert _written(publication_representations(rows)) == _through_models(varied)


def test_the_list_page_is_what_the_serializer_writes(api_a, varied):
    response = api_a.get(URL, {"limit": 2})

    assert response.status_code == 200
    page = json.loads(response.content)
    assert list(page) == ["next", "previous", "results"]
    assert _written(page["results"]) == _through_models(varied[:2])
    rest = json.loads(api_a.get(page["next"]).content)["results"]
    assert _written(rest) == _through_models(varied[2:])
    shown = page["results"][1]["renditions"]
    assert shown[0]["first_comment"]["error"]["details"] == {"scope": "comments"}
    assert shown[1]["error"]["kind"] == "timeout_after_send"
    assert shown[2]["segments"][0]["text"] == "Own text"
    assert shown[0]["segments"][1]["text"] == "Second"
    assert page["results"][1]["segments"][1]["media"][0]["alt_text"] == "The media's own text"


def test_a_list_it_cannot_nest_reads_its_ids_first(varied):
    """A DISTINCT list selects its order's columns too: read by ids, in the same order."""
    distinct = varied.distinct()
    rows = list(with_publication_rows(distinct))
    assert [row["id"] for row in rows] == [p.pk for p in varied]
    assert _written(publication_representations(rows)) == _through_models(varied)

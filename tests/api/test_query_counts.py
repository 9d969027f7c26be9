"""How many SQL queries creating and reading a publication costs, so that a change adding
a query per destination, segment or media link (or any query at all) shows up here.

Targets: at most 12 queries for POST /publications with 3 destinations, scheduled; at
most 5 for GET /publications/{id} (it costs 2). Counted as a request runs in production: these tests
run outside a test transaction (so the create's own transaction is the outermost one, as
it is under gunicorn, and costs no savepoint). Savepoints and the token lookup are
counted; the maintenance switch, cached per process, is not.

- a draft, any number of destinations: 8 (the token; BEGIN; the accounts and media
  named, in one query; one query for the ids of every new row, from the tables'
  sequences; every row of the six tables in one insert; the organization's lock and,
  after it, the count of its publications this month (the quota); COMMIT. The lock is
  taken last, so concurrent creates of one organization wait for each other only over
  the count and the commit. The response is built from the rows, not read back);
- scheduled, any number of destinations: 12 (the draft's 8, one insert for every publish
  job with the NOTIFY waking the workers, and the status-change event's webhook outbox:
  its savepoint, endpoint lookup and release);
- with an Idempotency-Key: 5 more (the key's row inserted, locked and completed, and the
  create's savepoint inside the key's transaction, which holds BEGIN and COMMIT);
- the detail read: 2 (the token with its workspace, organization, creator and the
  creator's roles; the publication with its segments and their media, its renditions
  with their accounts, attempts, first comments, segments and media, as one JSON value).
  Before the JSON read it was 5 (a query per relation);
- a list page: 2 (the token; the page, each publication read whole as its detail read is,
  in the query that lists them), whatever the number of publications.
"""

import pytest
from django.db import connection
from django.db.models import Prefetch
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.api.serializers.publications import PublicationSerializer
from apps.ops.services import maintenance_cache_clear, maintenance_state
from apps.publications.models import Publication
from apps.renditions.models import DeliveryAttempt, FirstComment, Rendition
from tests.api.helpers import later
from tests.factories import SocialAccountFactory

URL = "/api/v1/publications"

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sandboxes(workspace_a):
    return [
        SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle=f"sandbox{i}")
        for i in range(3)
    ]


@pytest.fixture
def api(api_a):
    """The client after one request, so the token's last use is already recorded, with the
    maintenance switch freshly cached (a write reads it at most once per cache period)."""
    assert api_a.get(URL).status_code == 200
    maintenance_cache_clear()
    maintenance_state()
    return api_a


def _body(accounts, media, **extra):
    return {
        "segments": [
            {"text": "First", "media": [{"id": media.pk, "alt_text": "A red square"}]},
            {"text": "Second", "media": [{"id": media.pk}]},
        ],
        "destinations": [{"account": account.pk} for account in accounts],
        **extra,
    }


def _queries(call, expected_status):
    """How many queries call() ran; the SQL is printed to show where they go."""
    with CaptureQueriesContext(connection) as captured:
        response = call()
    assert response.status_code == expected_status, response.content
    for query in captured.captured_queries:
        print(query["sql"][:200])
    return len(captured), response.json()


@pytest.mark.parametrize("destinations", [1, 3])
def test_a_draft_costs_the_same_for_any_number_of_destinations(
    api, sandboxes, media_a, destinations
):
    body = _body(sandboxes[:destinations], media_a)

    count, created = _queries(lambda: api.post(URL, body, format="json"), 201)

    assert len(created["renditions"]) == destinations
    assert count == 8


@pytest.mark.parametrize("destinations", [1, 3])
def test_scheduling_costs_the_same_for_any_number_of_destinations(
    api, sandboxes, media_a, destinations
):
    body = _body(sandboxes[:destinations], media_a, status="scheduled", scheduled_at=later(hours=2))

    count, created = _queries(lambda: api.post(URL, body, format="json"), 201)

    assert created["status"] == "scheduled"
    assert {r["status"] for r in created["renditions"]} == {"scheduled"}
    assert count == 12


def test_an_idempotency_key_costs_its_row_and_a_savepoint(api, sandboxes, media_a):
    body = _body(sandboxes, media_a, status="scheduled", scheduled_at=later(hours=2))

    count, _created = _queries(
        lambda: api.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY="count-1"), 201
    )

    assert count == 12 + 5


@pytest.mark.parametrize("destinations", [1, 3])
def test_reading_one_costs_two_queries(api, sandboxes, media_a, destinations):
    created = api.post(URL, _body(sandboxes[:destinations], media_a), format="json").json()

    count, shown = _queries(lambda: api.get(f"{URL}/{created['id']}"), 200)

    assert shown == created
    assert count == 2  # the token (with its roles), the publication with all it shows


def test_the_read_shows_what_the_rows_hold(api, sandboxes, media_a):
    """The relations read as JSON inside their parent's query come out exactly as the
    ORM's own prefetch reads them: attempts with their errors and times, published
    segments, media alt text from the link or, when it has none, from the media."""
    media_a.alt_text = "The media's own text"
    media_a.save()
    created = api.post(
        URL, _body(sandboxes, media_a, status="scheduled", scheduled_at=later()), format="json"
    ).json()
    rendition = Rendition.objects.get(pk=created["renditions"][1]["id"])
    started = timezone.now()
    for kind, outcome in (("publish", "failed"), ("reconcile", "succeeded")):
        DeliveryAttempt.objects.create(
            rendition=rendition,
            workspace=rendition.workspace,
            kind=kind,
            outcome=outcome,
            segment_position=0,
            idempotency_key="key-1",
            error={"kind": "provider_unavailable", "message": "503"},
            provider_post_id="p1" if outcome == "succeeded" else "",
            note="checked",
            started_at=started,
            finished_at=started,
        )
    rendition.segments.get(position=0).mark_published("p1", "https://example.test/p1")

    count, shown = _queries(lambda: api.get(f"{URL}/{created['id']}"), 200)

    plain = Publication.objects.prefetch_related(
        "segments__media_links__media",
        "renditions__social_account",
        "renditions__segments__media",
        "renditions__delivery_attempts",
    ).get(pk=created["id"])
    assert shown == PublicationSerializer(plain).data
    attempts = shown["renditions"][1]["delivery_attempts"]
    assert [a["kind"] for a in attempts] == ["publish", "reconcile"]
    assert attempts[0]["error"] == {"kind": "provider_unavailable", "message": "503"}
    assert shown["segments"][1]["media"][0]["alt_text"] == "The media's own text"
    assert shown["renditions"][1]["segments"][0]["provider_post_id"] == "p1"
    assert count == 2


def test_the_read_shows_overrides_and_first_comments_as_the_orm_reads_them(api, sandboxes, media_a):
    """A destination with its own text, one published with its first comment and one
    still scheduled: the one-query read renders exactly what the ORM's prefetch does."""
    body = _body(sandboxes, media_a, status="scheduled", scheduled_at=later())
    body["first_comment"] = "Links in the comments"
    body["destinations"][2]["segments"] = [{"text": "Own text"}]
    created = api.post(URL, body, format="json").json()
    published = Rendition.objects.get(pk=created["renditions"][1]["id"])
    Rendition.objects.filter(pk=published.pk).update(
        status=Rendition.Status.PUBLISHED,
        published_at=timezone.now(),
        provider_post_id="p9",
        provider_url="https://example.test/p9",
    )
    FirstComment.objects.create(
        rendition=published,
        workspace=published.workspace,
        text="Links in the comments",
        status=FirstComment.Status.FAILED,
        last_error={"kind": "permission_missing", "message": "403", "scope": "comments"},
    )

    count, shown = _queries(lambda: api.get(f"{URL}/{created['id']}"), 200)

    plain = Publication.objects.prefetch_related(
        "segments__media_links__media",
        Prefetch("renditions", queryset=Rendition.objects.order_by("pk")),
        "renditions__social_account",
        "renditions__first_comment",
        "renditions__segments__media",
        "renditions__segments__source_segment",
        "renditions__delivery_attempts",
    ).get(pk=created["id"])
    assert shown == PublicationSerializer(plain).data
    assert shown["renditions"][2]["segments"][0]["text"] == "Own text"
    assert shown["renditions"][0]["segments"][1]["text"] == "Second"
    comment = shown["renditions"][1]["first_comment"]
    assert comment["status"] == "failed"
    assert comment["error"]["details"] == {"scope": "comments"}
    assert shown["renditions"][0]["first_comment"] is None
    assert count == 2


def test_an_unknown_or_foreign_id_is_not_found(api, sandboxes, media_a, api_b):
    created = api.post(URL, _body(sandboxes, media_a), format="json").json()

    assert api.get(f"{URL}/{created['id'] + 1000}").status_code == 404
    response = api_b.get(f"{URL}/{created['id']}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("publications", [1, 4])
def test_a_list_shows_each_publication_as_its_detail_read_and_costs_the_same_for_any_number(
    api, sandboxes, media_a, publications
):
    """A list reads each publication whole in the query that lists them: the same answer
    as its detail read, and no query more per publication."""
    created = [
        api.post(URL, _body(sandboxes, media_a, first_comment="Hi"), format="json").json()
        for _ in range(publications)
    ]

    count, listed = _queries(lambda: api.get(URL), 200)

    details = [api.get(f"{URL}/{p['id']}").json() for p in reversed(created)]
    assert listed["results"] == details
    assert count == 2  # the token, the page with everything it shows

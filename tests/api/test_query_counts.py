"""How many SQL queries creating and reading a publication costs, so that a change adding
a query per destination, segment or media link shows up here.

Targets: at most 12 queries for POST /publications with 3 destinations, at most 5 for
GET /publications/{id}. Reached so far (savepoints and the token lookup included, the
maintenance switch, cached per process, not):

- a draft with 3 destinations: 24, the same as with 1 (every table is written with one
  insert, and the response reads one query per table);
- scheduled with 3 destinations: 39; each destination adds its guarded status update and
  its publish job (2 queries);
- the detail read: 8 (the token, then one query per table shown: the publication, its
  segments, their media, renditions with accounts, their segments, their media, and
  delivery attempts), whatever the number of destinations.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.ops.services import maintenance_cache_clear, maintenance_state
from tests.api.helpers import later
from tests.factories import SocialAccountFactory

URL = "/api/v1/publications"


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
            {"text": "Second"},
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
    assert count == 24


@pytest.mark.parametrize("destinations", [1, 3])
def test_scheduling_adds_a_status_update_and_a_job_per_destination(
    api, sandboxes, media_a, destinations
):
    body = _body(sandboxes[:destinations], media_a, status="scheduled", scheduled_at=later(hours=2))

    count, created = _queries(lambda: api.post(URL, body, format="json"), 201)

    assert created["status"] == "scheduled"
    assert count == 33 + 2 * destinations


@pytest.mark.parametrize("destinations", [1, 3])
def test_reading_one_costs_one_query_per_table(api, sandboxes, media_a, destinations):
    created = api.post(URL, _body(sandboxes[:destinations], media_a), format="json").json()

    count, shown = _queries(lambda: api.get(f"{URL}/{created['id']}"), 200)

    assert shown == created
    assert count == 8

"""The queue over the API: posting slots of the workspace and of an account, and
POST /publications/{id}/queue (scopes and outsiders: tests/api/test_access.py walks them)."""

from datetime import UTC, datetime

import pytest
import time_machine

from apps.planning.models import QueueSchedule
from tests.api.helpers import bearer, error
from tests.factories import SocialAccountFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2027, 1, 1, 10, tzinfo=UTC)  # a Friday
SLOTS = "/api/v1/queue-slots"


@pytest.fixture(autouse=True)
def _frozen():
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def news(workspace_a):
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="news")


def draft(api, account, text="Queued by API"):
    response = api.post(
        "/api/v1/publications",
        {"segments": [{"text": text}], "destinations": [{"account": account.pk}]},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def test_the_workspace_slots_are_replaced_and_read_back(api_a):
    response = api_a.put(
        SLOTS,
        {
            "slots": [
                {"weekday": "thu", "time": "09:00"},
                {"weekday": "mon", "time": "12:30"},
                {"weekday": "mon", "time": "09:00"},
            ],
            "timezone": "Europe/Paris",
        },
        format="json",
    )

    assert response.status_code == 200, response.content
    body = api_a.get(SLOTS).json()
    assert body == {
        "account": None,
        "source": "workspace",
        "timezone": "Europe/Paris",
        "timezone_is_workspace_default": False,
        "slots": [
            {"weekday": "mon", "time": "09:00"},
            {"weekday": "mon", "time": "12:30"},
            {"weekday": "thu", "time": "09:00"},
        ],
        "description": "Monday 09:00, 12:30 · Thursday 09:00 (Europe/Paris)",
    }


def test_a_bad_slot_is_a_validation_envelope_and_changes_nothing(api_a):
    response = api_a.put(
        SLOTS,
        {"slots": [{"weekday": "mon", "time": "9am"}, {"weekday": "someday", "time": "09:00"}]},
        format="json",
    )

    assert response.status_code == 400
    err = error(response)
    assert err["code"] == "VALIDATION_ERROR"
    assert set(err["details"]) == {"slots.0.time", "slots.1.weekday"}
    assert not QueueSchedule.objects.exists()


def test_an_unknown_zone_is_refused(api_a):
    response = api_a.put(SLOTS, {"slots": [], "timezone": "Mars/Olympus"}, format="json")

    assert response.status_code == 400
    assert error(response)["code"] == "INVALID_TIMEZONE"


def test_an_account_follows_the_default_gets_its_own_then_follows_again(api_a, news):
    api_a.put(SLOTS, {"slots": [{"weekday": "mon", "time": "09:00"}]}, format="json")
    url = f"/api/v1/accounts/{news.pk}/queue-slots"
    assert api_a.get(url).json()["source"] == "workspace"

    own = api_a.put(url, {"slots": [{"weekday": "fri", "time": "17:00"}]}, format="json")
    assert own.status_code == 200
    assert own.json()["source"] == "account"
    assert own.json()["slots"] == [{"weekday": "fri", "time": "17:00"}]

    back = api_a.delete(url)
    assert back.status_code == 200
    assert back.json()["source"] == "workspace"
    assert back.json()["slots"] == [{"weekday": "mon", "time": "09:00"}]


def test_a_draft_goes_into_the_next_free_slot(api_a, news):
    api_a.put(
        SLOTS,
        {"slots": [{"weekday": "mon", "time": "09:00"}], "timezone": "Europe/Warsaw"},
        format="json",
    )
    first, second = draft(api_a, news, "First"), draft(api_a, news, "Second")

    one = api_a.post(f"/api/v1/publications/{first['id']}/queue", {"revision": 1}, format="json")
    two = api_a.post(f"/api/v1/publications/{second['id']}/queue", {"revision": 1}, format="json")

    assert one.status_code == 200, one.content
    assert (one.json()["status"], one.json()["scheduled_at"]) == (
        "scheduled",
        "2027-01-04T08:00:00Z",
    )
    assert one.json()["revision"] == 2
    assert two.json()["scheduled_at"] == "2027-01-11T08:00:00Z"  # the Monday after


def test_queueing_without_slots_says_what_to_do(api_a, news):
    publication = draft(api_a, news)

    response = api_a.post(
        f"/api/v1/publications/{publication['id']}/queue", {"revision": 1}, format="json"
    )

    assert response.status_code == 400
    err = error(response)
    assert err["code"] == "NO_QUEUE_SLOTS"
    assert err["details"] == {"account": news.pk, "handle": "news"}


def test_queueing_a_stale_revision_is_a_conflict(api_a, news):
    api_a.put(SLOTS, {"slots": [{"weekday": "mon", "time": "09:00"}]}, format="json")
    publication = draft(api_a, news)

    response = api_a.post(
        f"/api/v1/publications/{publication['id']}/queue", {"revision": 3}, format="json"
    )

    assert response.status_code == 409
    assert error(response)["code"] == "REVISION_CONFLICT"
    assert api_a.get(f"/api/v1/publications/{publication['id']}").json()["status"] == "draft"


def test_queueing_needs_the_revision(api_a, news):
    publication = draft(api_a, news)

    response = api_a.post(f"/api/v1/publications/{publication['id']}/queue", {}, format="json")

    assert response.status_code == 400
    assert "revision" in error(response)["details"]


def test_queueing_needs_the_publish_scope(workspace_a, make_token, news):
    client = bearer(make_token(workspace_a, scopes=["read", "write"]).clear)
    publication = draft(client, news)

    response = client.post(
        f"/api/v1/publications/{publication['id']}/queue", {"revision": 1}, format="json"
    )

    assert response.status_code == 403
    assert error(response)["code"] == "INSUFFICIENT_SCOPE"


def test_another_workspaces_publication_is_not_found(api_a, api_b, news):
    publication = draft(api_a, news)

    response = api_b.post(
        f"/api/v1/publications/{publication['id']}/queue", {"revision": 1}, format="json"
    )

    assert response.status_code == 404
    assert error(response)["code"] == "NOT_FOUND"
    assert api_b.get(f"/api/v1/accounts/{news.pk}/queue-slots").status_code == 404

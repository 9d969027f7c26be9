"""/api/v1/evergreen: marking posts evergreen, their settings, turns, pause, resume, skip
and stop (scopes and outsiders' ids are walked in test_access)."""

import pytest

from apps.planning.models import EvergreenPost
from apps.publishing.services import publication_create
from tests.api.helpers import error

pytestmark = pytest.mark.django_db

URL = "/api/v1/evergreen"


@pytest.fixture
def post(workspace_a, alice):
    from apps.sandbox.services import sandbox_account_create

    account = sandbox_account_create(workspace=workspace_a, handle="news")
    return publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Guide"}],
        destinations=[{"account": account.pk}],
    )


def test_posts_are_marked_and_read_back(api_a, post):
    response = api_a.post(
        URL,
        {"publications": [post.pk], "every_days": 14, "variations": ["Guide, again"]},
        format="json",
    )

    assert response.status_code == 201, response.content
    [marked] = response.json()["results"]
    assert (marked["source"], marked["every_days"], marked["status"]) == (post.pk, 14, "active")
    assert marked["variations"] == ["Guide, again"]
    listed = api_a.get(URL).json()["results"]
    assert [row["id"] for row in listed] == [marked["id"]]
    assert api_a.get(f"{URL}/{marked['id']}/shares").json() == []


def test_settings_change_and_the_states(api_a, post):
    marked = api_a.post(URL, {"publications": [post.pk]}, format="json").json()["results"][0]
    one = f"{URL}/{marked['id']}"

    changed = api_a.patch(one, {"min_gap_days": 0, "max_shares": 3}, format="json").json()
    paused = api_a.post(f"{one}/pause").json()
    again = api_a.post(f"{one}/pause")
    resumed = api_a.post(f"{one}/resume").json()
    skipped = api_a.post(f"{one}/skip").json()
    stopped = api_a.post(f"{one}/stop").json()

    assert (changed["every_days"], changed["min_gap_days"], changed["max_shares"]) == (28, 0, 3)
    assert paused["status"] == "paused" and resumed["status"] == "active"
    assert again.status_code == 409 and error(again)["code"] == "NOT_ACTIVE"
    assert skipped["status"] == "active" and stopped["status"] == "ended"
    turns = api_a.get(f"{one}/shares").json()
    assert [(t["number"], t["status"]) for t in turns] == [(1, "skipped")]
    ended = api_a.patch(one, {"every_days": 3}, format="json")
    assert ended.status_code == 409 and error(ended)["code"] == "EVERGREEN_ENDED"


def test_bad_settings_are_refused_by_field(api_a, post):
    response = api_a.post(
        URL,
        {"publications": [post.pk], "every_days": 0, "ends_on": 20270101, "colour": "red"},
        format="json",
    )

    assert response.status_code == 400
    assert set(error(response)["details"]) == {"every_days", "ends_on", "colour"}
    assert not EvergreenPost.objects.exists()


def test_an_unknown_publication_is_404_and_marks_nothing(api_a, post):
    response = api_a.post(URL, {"publications": [post.pk, post.pk + 1000]}, format="json")

    assert response.status_code == 404
    assert error(response)["details"] == {"publications": [post.pk + 1000]}
    assert not EvergreenPost.objects.exists()


def test_the_next_turn_says_where_a_repeat_is_refused(api_a, post, workspace_a):
    from tests.factories import SocialAccountFactory

    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="onx")
    source = publication_create(
        workspace=workspace_a,
        author=None,
        segments=[{"text": "Same words"}],
        destinations=[{"account": x.pk}],
        status="scheduled",
    )
    marked = api_a.post(URL, {"publications": [source.pk]}, format="json").json()["results"][0]

    turn = api_a.get(f"{URL}/{marked['id']}/next").json()

    assert (turn["number"], turn["text"]) == (1, "Same words")
    assert turn["destinations"] == [
        {
            "account": x.pk,
            "handle": "onx",
            "platform": "x",
            "text": "Same words",
            "refused": True,
            "caution": "",
        }
    ]

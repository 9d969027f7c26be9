"""The queue pages: add to queue from the composer, the queue in slot order, swapping two
posts (by button or drop, revision-checked), removing one, and editing posting slots."""

from datetime import UTC, datetime, time

import pytest
import time_machine

from apps.planning.models import QueueSchedule
from apps.planning.services import queue_slots_replace, queued_publication_create
from apps.publications.models import Publication
from apps.renditions.models import Rendition

pytestmark = pytest.mark.django_db

QUEUE = "/w/ws-a/queue/"
MOVE = "/w/ws-a/queue/move/"
SLOTS = "/w/ws-a/queue/slots/"
COMPOSE = "/w/ws-a/compose/"
HTMX = {"HTTP_HX_REQUEST": "true"}
NOW = datetime(2027, 1, 1, 10, tzinfo=UTC)  # a Friday
MON_9 = datetime(2027, 1, 4, 8, tzinfo=UTC)  # 09:00 in Warsaw
MON_12 = datetime(2027, 1, 4, 11, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _frozen():
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def slots(workspace_a):
    return queue_slots_replace(
        workspace=workspace_a, slots=[(0, time(9)), (0, time(12))], timezone="Europe/Warsaw"
    )


def queued(workspace, user, account, text):
    return queued_publication_create(
        workspace=workspace,
        author=user,
        segments=[{"text": text}],
        destinations=[{"account": account.pk}],
    )


def rendition(publication):
    return Rendition.objects.get(publication=publication)


def test_the_composer_adds_a_post_to_the_queue(as_bob, news, slots):
    response = as_bob.post(
        COMPOSE,
        {
            "segment_count": "1",
            "segment-0-text": "From the queue",
            "destinations": [str(news.pk)],
            "op": "add_to_queue",
        },
    )

    publication = Publication.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/w/ws-a/posts/{publication.pk}/"
    assert (publication.status, publication.scheduled_at) == ("scheduled", MON_9)


def test_the_composer_offers_add_to_queue_next_to_schedule(as_bob, news):
    page = as_bob.get(COMPOSE).content.decode()
    assert 'name="op" value="add_to_queue"' in page


def test_adding_to_the_queue_without_slots_says_what_to_do(as_bob, news):
    response = as_bob.post(
        COMPOSE,
        {
            "segment_count": "1",
            "segment-0-text": "Nowhere to go",
            "destinations": [str(news.pk)],
            "op": "add_to_queue",
        },
    )

    assert response.status_code == 400
    assert "@news has no posting slots" in response.content.decode()
    assert not Publication.objects.exists()


def test_editing_a_draft_then_adding_it_to_the_queue(as_bob, bob, news, slots, workspace_a):
    as_bob.post(
        COMPOSE,
        {
            "segment_count": "1",
            "segment-0-text": "Draft",
            "destinations": [str(news.pk)],
            "op": "save_draft",
        },
    )
    draft = Publication.objects.get()

    response = as_bob.post(
        f"/w/ws-a/posts/{draft.pk}/edit/",
        {
            "segment_count": "1",
            "segment-0-text": "Draft, edited",
            "destinations": [str(news.pk)],
            "revision": str(draft.revision),
            "op": "add_to_queue",
        },
    )

    assert response.status_code == 302
    draft.refresh_from_db()
    assert (draft.status, draft.scheduled_at) == ("scheduled", MON_9)
    assert draft.segments.get().text == "Draft, edited"


def test_the_queue_lists_each_accounts_posts_in_slot_order(as_vera, alice, news, slots):
    queued(news.workspace, alice, news, "First in line")
    queued(news.workspace, alice, news, "Second in line")

    page = as_vera.get(QUEUE).content.decode()

    assert page.index("First in line") < page.index("Second in line")
    assert "Slots: Monday 09:00, 12:00 (Europe/Warsaw)" in page
    assert 'draggable="true"' not in page  # a viewer cannot move posts


def test_a_move_swaps_the_two_posts_times(as_bob, alice, news, slots):
    first = queued(news.workspace, alice, news, "First")
    second = queued(news.workspace, alice, news, "Second")

    response = as_bob.post(
        MOVE,
        {
            "rendition": rendition(first).pk,
            "revision": first.revision,
            "swap": f"{rendition(second).pk}:{second.revision}",
        },
        **HTMX,
    )

    assert response.status_code == 200
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.scheduled_at, second.scheduled_at) == (MON_12, MON_9)
    page = response.content.decode()
    assert page.index("Second") < page.index("First")


def test_a_move_against_a_stale_revision_is_a_conflict_and_changes_nothing(
    as_bob, alice, news, slots
):
    first = queued(news.workspace, alice, news, "First")
    second = queued(news.workspace, alice, news, "Second")

    response = as_bob.post(
        MOVE,
        {
            "rendition": rendition(first).pk,
            "revision": first.revision + 5,
            "swap": f"{rendition(second).pk}:{second.revision}",
        },
        **HTMX,
    )

    assert response.status_code == 409
    assert "Reload the queue and move it again" in response.content.decode()
    first.refresh_from_db()
    assert first.scheduled_at == MON_9


def test_a_viewer_cannot_move_posts(as_vera, alice, news, slots):
    first = queued(news.workspace, alice, news, "First")
    second = queued(news.workspace, alice, news, "Second")

    response = as_vera.post(
        MOVE,
        {
            "rendition": rendition(first).pk,
            "revision": first.revision,
            "swap": f"{rendition(second).pk}:{second.revision}",
        },
    )

    assert response.status_code == 403
    first.refresh_from_db()
    assert first.scheduled_at == MON_9


def test_another_workspaces_posts_are_not_found(as_charlie, alice, news, slots):
    first = queued(news.workspace, alice, news, "First")
    second = queued(news.workspace, alice, news, "Second")
    data = {
        "rendition": rendition(first).pk,
        "revision": first.revision,
        "swap": f"{rendition(second).pk}:{second.revision}",
    }

    assert as_charlie.post(MOVE, data).status_code == 404
    assert as_charlie.post("/w/ws-b/queue/move/", data).status_code == 404
    assert (
        as_charlie.post(
            f"/w/ws-b/queue/{first.pk}/remove/", {"account": news.pk, "revision": 1}
        ).status_code
        == 404
    )
    assert as_charlie.get(f"/w/ws-b/queue/slots/?account={news.pk}").status_code == 404
    first.refresh_from_db()
    assert (first.status, first.scheduled_at) == ("scheduled", MON_9)


def test_removing_a_post_from_the_queue_makes_it_a_draft(as_bob, alice, news, slots):
    post = queued(news.workspace, alice, news, "Going away")

    response = as_bob.post(
        f"/w/ws-a/queue/{post.pk}/remove/", {"account": news.pk, "revision": post.revision}
    )

    assert response.status_code == 302
    post.refresh_from_db()
    assert (post.status, post.scheduled_at) == ("draft", None)


def test_adding_a_time_on_some_days_and_removing_one(as_bob, workspace_a):
    response = as_bob.post(SLOTS, {"op": "add", "weekdays": ["0", "3"], "time": "09:30"})

    assert response.status_code == 302
    schedule = QueueSchedule.objects.get(workspace=workspace_a, social_account=None)
    assert sorted(schedule.slots.values_list("weekday", "time")) == [
        (0, time(9, 30)),
        (3, time(9, 30)),
    ]

    as_bob.post(SLOTS, {"op": "remove:3-09:30"})
    assert list(schedule.slots.values_list("weekday", "time")) == [(0, time(9, 30))]

    page = as_bob.get(SLOTS).content.decode()
    assert 'aria-label="Remove Monday 09:30"' in page


def test_adding_a_slot_without_days_says_so(as_bob):
    response = as_bob.post(SLOTS, {"op": "add", "time": "09:30"})

    assert response.status_code == 400
    assert "Pick at least one day." in response.content.decode()


def test_an_account_gets_slots_of_its_own_then_follows_the_default_again(
    as_bob, news, slots, workspace_a
):
    url = f"{SLOTS}?account={news.pk}"
    assert "follows the workspace's slots" in as_bob.get(url).content.decode()

    as_bob.post(SLOTS, {"op": "own", "account": news.pk})
    as_bob.post(SLOTS, {"op": "zone", "account": news.pk, "timezone": "America/New_York"})
    own = QueueSchedule.objects.get(social_account=news)
    assert (own.timezone, own.slots.count()) == ("America/New_York", 2)

    as_bob.post(SLOTS, {"op": "reset", "account": news.pk})
    assert not QueueSchedule.objects.filter(social_account=news).exists()


def test_a_viewer_reads_slots_but_cannot_change_them(as_vera, workspace_a):
    assert as_vera.get(SLOTS).status_code == 200
    response = as_vera.post(SLOTS, {"op": "add", "weekdays": ["0"], "time": "09:30"})
    assert response.status_code == 403
    assert not QueueSchedule.objects.exists()

"""Adding posts to the queue, swapping two queued posts, taking one off the queue, and
editing slots, through the services (real database, frozen clock)."""

from datetime import UTC, datetime, time

import pytest

from apps.common.errors import Conflict, NotFound, ValidationFailed
from apps.planning.models import QueueSchedule, QueueSlot
from apps.planning.services import (
    publication_queue,
    queue_remove,
    queue_slots_replace,
    queue_slots_reset,
    queue_swap,
    queued_publication_create,
)
from apps.publishing.services import publication_create
from apps.renditions.models import Rendition
from tests.factories import SocialAccountFactory

pytestmark = pytest.mark.django_db

MON = 0
NOW = datetime(2027, 1, 1, 10, tzinfo=UTC)  # a Friday
MON_9 = datetime(2027, 1, 4, 8, tzinfo=UTC)  # 09:00 in Warsaw
MON_12 = datetime(2027, 1, 4, 11, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _frozen(clock):
    with clock(NOW):
        yield


def queued(workspace, author, accounts, text="Hello"):
    return queued_publication_create(
        workspace=workspace,
        author=author,
        segments=[{"text": text}],
        destinations=[{"account": a.pk} for a in accounts],
    )


def rendition(publication, account):
    return Rendition.objects.get(publication=publication, social_account=account)


def test_adding_to_the_queue_schedules_at_the_next_free_slot(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00"), (MON, "12:00")])

    first = queued(workspace_a, alice, [news], "First")
    second = queued(workspace_a, alice, [news], "Second")

    assert (first.status, first.scheduled_at, first.timezone) == (
        "scheduled",
        MON_9,
        "Europe/Warsaw",
    )
    assert second.scheduled_at == MON_12
    assert rendition(second, news).status == "scheduled"
    assert rendition(second, news).scheduled_at is None  # follows the post's one time


def test_a_post_to_several_accounts_takes_the_slot_free_for_all(
    workspace_a, alice, news, blog, set_slots
):
    set_slots([(MON, "09:00"), (MON, "12:00")])
    queued(workspace_a, alice, [news])

    both = queued(workspace_a, alice, [news, blog])

    assert both.scheduled_at == MON_12
    assert {r.effective_scheduled_at for r in both.renditions.all()} == {MON_12}


def test_an_account_of_another_workspace_is_not_found(workspace_a, workspace_b, alice, set_slots):
    set_slots([(MON, "09:00")])
    theirs = SocialAccountFactory(workspace=workspace_b, platform="sandbox")

    with pytest.raises(NotFound) as caught:
        queued(workspace_a, alice, [theirs])

    assert caught.value.details == {
        "destinations.0.account": ["No such account in this workspace."]
    }
    assert not workspace_a.publications.exists()


def test_without_slots_nothing_is_created(workspace_a, alice, news):
    with pytest.raises(ValidationFailed) as caught:
        queued(workspace_a, alice, [news])

    assert caught.value.code == "NO_QUEUE_SLOTS"
    assert not workspace_a.publications.exists()


def test_a_draft_is_queued_at_its_revision(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00")])
    draft = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Later"}],
        destinations=[{"account": news.pk}],
    )

    queued_post = publication_queue(publication=draft, expected_revision=1)

    assert (queued_post.status, queued_post.scheduled_at, queued_post.revision) == (
        "scheduled",
        MON_9,
        2,
    )


def test_queueing_a_stale_revision_is_a_conflict(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00")])
    draft = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Later"}],
        destinations=[{"account": news.pk}],
    )

    with pytest.raises(Conflict) as caught:
        publication_queue(publication=draft, expected_revision=7)

    assert caught.value.code == "REVISION_CONFLICT"
    draft.refresh_from_db()
    assert (draft.status, draft.scheduled_at) == ("draft", None)


def test_destinations_with_their_own_time_come_back_to_the_post_time(
    workspace_a, alice, news, set_slots
):
    set_slots([(MON, "09:00")])
    draft = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Later"}],
        destinations=[
            {
                "account": news.pk,
                "scheduled_at": "2027-02-01T09:00:00Z",
                "segments": [{"text": "Own text"}],
            }
        ],
    )

    publication_queue(publication=draft, expected_revision=1)

    own = rendition(draft, news)
    assert (own.status, own.scheduled_at, own.effective_scheduled_at) == ("scheduled", None, MON_9)
    assert [s.text for s in own.segments.all()] == ["Own text"]


def test_a_published_post_cannot_be_queued(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00")])
    post = queued(workspace_a, alice, [news])
    Rendition.objects.filter(publication=post).update(status="published", published_at=NOW)
    post.status = "published"
    post.save()

    with pytest.raises(Conflict) as caught:
        publication_queue(publication=post, expected_revision=post.revision)

    assert caught.value.code == "NOT_QUEUEABLE"


def test_two_queued_posts_swap_times(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00"), (MON, "12:00")])
    first, second = queued(workspace_a, alice, [news]), queued(workspace_a, alice, [news])

    one, two = queue_swap(
        first=rendition(first, news),
        first_revision=first.revision,
        second=rendition(second, news),
        second_revision=second.revision,
    )

    assert (one.scheduled_at, two.scheduled_at) == (MON_12, MON_9)
    assert (one.revision, two.revision) == (first.revision + 1, second.revision + 1)


def test_a_swap_with_a_stale_revision_changes_nothing(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00"), (MON, "12:00")])
    first, second = queued(workspace_a, alice, [news]), queued(workspace_a, alice, [news])

    with pytest.raises(Conflict) as caught:
        queue_swap(
            first=rendition(first, news),
            first_revision=first.revision,
            second=rendition(second, news),
            second_revision=second.revision - 1 or 99,
        )

    assert caught.value.code == "REVISION_CONFLICT"
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.scheduled_at, second.scheduled_at) == (MON_9, MON_12)


def test_a_swap_that_would_double_book_another_destination_is_refused(
    workspace_a, alice, news, blog, set_slots
):
    set_slots([(MON, "09:00"), (MON, "12:00")])
    both = queued(workspace_a, alice, [news, blog])  # 09:00 for both
    queued(workspace_a, alice, [blog])  # blog at 12:00
    news_only = queued(workspace_a, alice, [news])  # news at 12:00

    with pytest.raises(Conflict) as caught:
        queue_swap(
            first=rendition(both, news),
            first_revision=both.revision,
            second=rendition(news_only, news),
            second_revision=news_only.revision,
        )

    assert caught.value.code == "SLOT_TAKEN"
    assert "@blog" in caught.value.message
    both.refresh_from_db()
    assert both.scheduled_at == MON_9


def test_posts_of_different_accounts_do_not_swap(workspace_a, alice, news, blog, set_slots):
    set_slots([(MON, "09:00")])
    one, two = queued(workspace_a, alice, [news]), queued(workspace_a, alice, [blog])

    with pytest.raises(ValidationFailed):
        queue_swap(
            first=rendition(one, news),
            first_revision=one.revision,
            second=rendition(two, blog),
            second_revision=two.revision,
        )


def test_removing_from_the_queue_leaves_a_draft_without_a_time(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00")])
    post = queued(workspace_a, alice, [news])

    draft = queue_remove(publication=post, expected_revision=post.revision)

    assert (draft.status, draft.scheduled_at) == ("draft", None)
    assert rendition(draft, news).status == "draft"
    # Its slot is free again.
    assert queued(workspace_a, alice, [news]).scheduled_at == MON_9


def test_replacing_slots_keeps_each_time_once_to_the_minute(workspace_a, news):
    schedule = queue_slots_replace(
        workspace=workspace_a,
        account=news,
        slots=[(MON, time(9, 0, 30)), (MON, time(9, 0)), (2, time(18, 15))],
        timezone="Europe/Paris",
    )

    assert list(schedule.slots.values_list("weekday", "time")) == [
        (MON, time(9, 0)),
        (2, time(18, 15)),
    ]
    assert QueueSlot.objects.for_workspace(workspace_a).count() == 2


def test_slots_with_a_bad_weekday_or_zone_are_refused(workspace_a):
    with pytest.raises(ValidationFailed) as caught:
        queue_slots_replace(workspace=workspace_a, slots=[(7, time(9))])
    assert "slots.0.weekday" in caught.value.details

    with pytest.raises(ValidationFailed) as caught:
        queue_slots_replace(workspace=workspace_a, slots=[(0, time(9))], timezone="Mars/Base")
    assert caught.value.code == "INVALID_TIMEZONE"
    assert not QueueSchedule.objects.exists()


def test_another_workspaces_account_cannot_get_slots(workspace_a, workspace_b):
    theirs = SocialAccountFactory(workspace=workspace_b)

    with pytest.raises(NotFound):
        queue_slots_replace(workspace=workspace_a, account=theirs, slots=[(0, time(9))])


def test_resetting_an_account_brings_back_the_default(workspace_a, news, set_slots):
    set_slots([(MON, "09:00")])
    set_slots([(2, "18:00")], account=news)

    queue_slots_reset(account=news)

    assert not QueueSchedule.objects.filter(social_account=news).exists()
    assert QueueSchedule.objects.filter(social_account__isnull=True).exists()

"""Slot computation: weekly slots to instants (with daylight saving), the next slot free
for every destination, daily caps, and the refusals when there is no slot to take."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.common.errors import Conflict, ValidationFailed
from apps.planning.slots import next_common_slot, slot_instants, weekly_slots
from apps.renditions.models import Rendition
from tests.factories import PublicationFactory, RenditionFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db

MON, TUE, SUN = 0, 1, 6


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def occupy(account, at, status=Rendition.Status.SCHEDULED):
    publication = PublicationFactory(
        workspace=account.workspace, status="scheduled", scheduled_at=at
    )
    return RenditionFactory(publication=publication, social_account=account, status=status)


def test_slots_are_wall_clock_times_in_the_schedule_zone(news, set_slots):
    set_slots([(MON, "09:00"), (TUE, "12:30")])
    # Friday 2027-01-01; Warsaw is UTC+1 in winter.
    found = list(slot_instants(weekly_slots(news), after=utc(2027, 1, 1), until=utc(2027, 1, 12)))

    assert found == [utc(2027, 1, 4, 8), utc(2027, 1, 5, 11, 30), utc(2027, 1, 11, 8)]


def test_a_slot_skipped_by_spring_forward_moves_forward_by_the_gap(news, set_slots):
    # 2027-03-28 (a Sunday): Warsaw jumps from 02:00 CET to 03:00 CEST.
    set_slots([(SUN, "02:30"), (SUN, "10:00")])

    found = list(slot_instants(weekly_slots(news), after=utc(2027, 3, 27), until=utc(2027, 3, 29)))

    # 02:30 does not exist: it is 03:30 CEST (01:30 UTC); 10:00 CEST is 08:00 UTC.
    assert found == [utc(2027, 3, 28, 1, 30), utc(2027, 3, 28, 8)]


def test_a_gap_moved_slot_meeting_another_slot_is_one_slot(news, set_slots):
    set_slots([(SUN, "02:30"), (SUN, "03:30")])

    found = list(slot_instants(weekly_slots(news), after=utc(2027, 3, 27), until=utc(2027, 3, 29)))

    assert found == [utc(2027, 3, 28, 1, 30)]


def test_a_slot_repeated_by_fall_back_is_used_once_at_its_first_occurrence(news, set_slots):
    # 2027-10-31 (a Sunday): Warsaw goes from 03:00 CEST back to 02:00 CET.
    set_slots([(SUN, "02:30")])

    found = list(slot_instants(weekly_slots(news), after=utc(2027, 10, 30), until=utc(2027, 11, 1)))

    assert found == [utc(2027, 10, 31, 0, 30)]  # 02:30 CEST, not 02:30 CET (01:30 UTC)


def test_an_account_with_its_own_slots_does_not_use_the_default(news, blog, set_slots):
    set_slots([(MON, "09:00")])
    set_slots([(TUE, "18:00")], account=news, zone="America/New_York")

    assert weekly_slots(news).describe() == "Tuesday 18:00 (America/New_York)"
    assert weekly_slots(news).is_own
    assert weekly_slots(blog).describe() == "Monday 09:00 (Europe/Warsaw)"
    assert not weekly_slots(blog).is_own


def test_a_schedule_without_a_zone_reads_the_workspace_zone(news, workspace_a, set_slots):
    workspace_a.default_timezone = "Asia/Tokyo"
    workspace_a.save()
    set_slots([(MON, "09:00")], zone="")

    at, zone = next_common_slot([news], after=utc(2027, 1, 1))

    assert (at, zone) == (utc(2027, 1, 4, 0), "Asia/Tokyo")


def test_the_next_free_slot_passes_over_taken_ones(news, set_slots):
    set_slots([(MON, "09:00"), (MON, "12:00")])
    occupy(news, utc(2027, 1, 4, 8))

    at, _zone = next_common_slot([news], after=utc(2027, 1, 1))

    assert at == utc(2027, 1, 4, 11)


def test_a_cancelled_or_draft_post_leaves_its_slot_free(news, set_slots):
    set_slots([(MON, "09:00")])
    occupy(news, utc(2027, 1, 4, 8), status=Rendition.Status.CANCELLED)
    occupy(news, utc(2027, 1, 4, 8), status=Rendition.Status.DRAFT)

    at, _zone = next_common_slot([news], after=utc(2027, 1, 1))

    assert at == utc(2027, 1, 4, 8)


def test_the_post_being_queued_does_not_take_its_own_slot(news, set_slots):
    set_slots([(MON, "09:00")])
    mine = occupy(news, utc(2027, 1, 4, 8))

    at, _zone = next_common_slot(
        [news], after=utc(2027, 1, 1), exclude_publication_id=mine.publication_id
    )

    assert at == utc(2027, 1, 4, 8)


def test_several_destinations_take_the_earliest_slot_free_for_all(news, blog, set_slots):
    set_slots([(MON, "09:00"), (MON, "12:00"), (MON, "15:00")])
    occupy(news, utc(2027, 1, 4, 8))
    occupy(blog, utc(2027, 1, 4, 11))

    at, _zone = next_common_slot([news, blog], after=utc(2027, 1, 1))

    assert at == utc(2027, 1, 4, 14)


def test_destinations_whose_slots_never_meet_are_refused(news, blog, set_slots):
    set_slots([(MON, "09:00")], account=news)
    set_slots([(TUE, "09:00")], account=blog)

    with pytest.raises(Conflict) as caught:
        next_common_slot([news, blog], after=utc(2027, 1, 1))

    assert caught.value.code == "NO_COMMON_SLOT"
    assert "@news, @blog have no posting slot in common" in caught.value.message


def test_a_day_at_the_daily_cap_is_passed_over(workspace_a, set_slots):
    # Instagram allows 100 posts a day (the catalog's daily_cap).
    insta = SocialAccountFactory(workspace=workspace_a, platform="instagram", handle="pics")
    set_slots([(MON, "09:00"), (TUE, "09:00")], zone="UTC")
    publications = [
        PublicationFactory(
            workspace=workspace_a,
            status="scheduled",
            scheduled_at=utc(2027, 1, 4, 12) + timedelta(minutes=n),
        )
        for n in range(100)
    ]
    Rendition.objects.bulk_create(
        Rendition(
            publication=p,
            workspace=workspace_a,
            social_account=insta,
            platform="instagram",
            status=Rendition.Status.SCHEDULED,
        )
        for p in publications
    )

    at, _zone = next_common_slot([insta], after=utc(2027, 1, 1))

    assert at == utc(2027, 1, 5, 9)  # Monday 2027-01-04 already has 100


def test_a_day_under_the_daily_cap_keeps_its_slot(workspace_a, set_slots):
    insta = SocialAccountFactory(workspace=workspace_a, platform="instagram", handle="pics")
    set_slots([(MON, "09:00")], zone="UTC")
    occupy(insta, utc(2027, 1, 4, 12))

    at, _zone = next_common_slot([insta], after=utc(2027, 1, 1))

    assert at == utc(2027, 1, 4, 9)


def test_no_slots_configured_is_a_clear_refusal(news):
    with pytest.raises(ValidationFailed) as caught:
        next_common_slot([news], after=utc(2027, 1, 1))

    assert caught.value.code == "NO_QUEUE_SLOTS"
    assert caught.value.message.startswith("@news has no posting slots")
    assert "Add slots on the Queue page" in caught.value.message


def test_an_account_given_an_empty_set_of_its_own_has_no_slots(news, set_slots):
    set_slots([(MON, "09:00")])
    set_slots([], account=news)

    with pytest.raises(ValidationFailed) as caught:
        next_common_slot([news], after=utc(2027, 1, 1))

    assert caught.value.code == "NO_QUEUE_SLOTS"


def test_a_queue_full_for_the_whole_horizon_is_refused(news, set_slots, monkeypatch):
    monkeypatch.setattr("apps.planning.slots.HORIZON", timedelta(days=7))
    set_slots([(MON, "09:00")], zone="UTC")
    occupy(news, utc(2027, 1, 4, 9))

    with pytest.raises(Conflict) as caught:
        next_common_slot([news], after=utc(2027, 1, 1))

    assert caught.value.code == "QUEUE_FULL"

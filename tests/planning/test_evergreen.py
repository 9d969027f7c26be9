"""Evergreen posts: their re-shares fill free queue slots only, after the cadence and the
gap, up to the limit, through the create pipeline and its approval rule, with the texts
taken in turn and a repeat left out where the platform would refuse it (real database,
frozen clock)."""

from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import IntegrityError, transaction

from apps.accounts.models import Organization
from apps.approvals.models import ApprovalRule, Review
from apps.common.errors import Conflict, NotFound, ValidationFailed
from apps.planning.evergreen import (
    EvergreenSettings,
    evergreen_mark,
    evergreen_pause,
    evergreen_resume,
    evergreen_skip,
    evergreen_stop,
)
from apps.planning.models import EvergreenPost, EvergreenShare
from apps.planning.recycling import (
    evergreen_recycle,
    evergreen_recycle_due,
    lineage,
    repeat_outlook,
)
from apps.planning.services import queued_publication_create
from apps.publications.models import Publication
from apps.publishing.services import publication_create
from apps.renditions.models import Rendition
from tests.factories import SocialAccountFactory

pytestmark = pytest.mark.django_db

MON, TUE = 0, 1
NOW = datetime(2027, 1, 1, 10, tzinfo=UTC)  # a Friday
MON_9 = datetime(2027, 1, 4, 8, tzinfo=UTC)  # 09:00 in Warsaw
MON_12 = datetime(2027, 1, 4, 11, tzinfo=UTC)
TUE_9 = datetime(2027, 1, 5, 8, tzinfo=UTC)
LONG_AGO = NOW - timedelta(days=60)


@pytest.fixture(autouse=True)
def _frozen(clock):
    with clock(NOW):
        yield


def went_out(workspace, author, accounts, text, at):
    publication = publication_create(
        workspace=workspace,
        author=author,
        segments=[{"text": text}],
        destinations=[{"account": a.pk} for a in accounts],
    )
    Rendition.objects.filter(publication=publication).update(
        status=Rendition.Status.PUBLISHED, published_at=at
    )
    Publication.objects.filter(pk=publication.pk).update(
        status=Publication.Status.PUBLISHED, scheduled_at=at
    )
    publication.refresh_from_db()
    return publication


def published(workspace, author, accounts, text="Our guide", *, at=LONG_AGO, alone=False):
    """A post that went out on every account at ``at``, and (unless ``alone``) another post
    an hour later, so that the accounts' last post is not this one."""
    publication = went_out(workspace, author, accounts, text, at)
    if not alone:
        went_out(workspace, author, accounts, f"Not {text}", at + timedelta(hours=1))
    return publication


def mark(workspace, author, publication, **settings):
    settings.setdefault("every_days", 28)
    settings.setdefault("min_gap_days", 7)
    [row] = evergreen_mark(
        workspace=workspace,
        publications=[publication],
        actor=author,
        settings=EvergreenSettings(**settings),
    )
    return row


def share_times(row):
    return [
        (s.number, s.slot_at, s.publication.status if s.publication else None)
        for s in row.shares.order_by("number")
    ]


def test_a_re_share_takes_the_first_free_slot_only(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00"), (MON, "12:00")])
    queued_publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Already queued"}],
        destinations=[{"account": news.pk}],
    )  # takes Monday 09:00
    row = mark(workspace_a, alice, published(workspace_a, alice, [news]))

    look = evergreen_recycle(evergreen=row)

    assert look.share is not None
    publication = look.share.publication
    assert (publication.status, publication.scheduled_at) == ("scheduled", MON_12)
    assert publication.reference_key == f"evergreen-{row.pk}-1"
    assert [s.text for s in publication.segments.all()] == ["Our guide"]
    assert publication.author == alice
    row.refresh_from_db()
    assert (row.shares_made, row.next_check_at, row.note) == (1, MON_12, {})


def test_one_turn_at_a_time_and_the_next_after_the_cadence(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00"), (TUE, "09:00")])
    row = mark(workspace_a, alice, published(workspace_a, alice, [news]), every_days=1)
    evergreen_recycle(evergreen=row)

    again = evergreen_recycle(evergreen=row)

    assert again.share is None and again.note["code"] == "WAITING"
    assert [n for n, *_ in share_times(row)] == [1]


def test_the_gap_after_the_post_last_went_out_on_an_account_is_kept(
    workspace_a, alice, news, set_slots
):
    set_slots([(MON, "09:00"), (TUE, "09:00")])
    went_out = NOW - timedelta(days=2)
    row = mark(
        workspace_a,
        alice,
        published(workspace_a, alice, [news], at=went_out),
        every_days=1,
        min_gap_days=30,
    )

    look = evergreen_recycle(evergreen=row)

    assert look.share is None and look.note["code"] == "NOT_YET"
    assert look.next_check_at == went_out + timedelta(days=30) - timedelta(days=7)
    assert not EvergreenShare.objects.exists()


def test_it_stops_after_its_limit(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00")])
    row = mark(workspace_a, alice, published(workspace_a, alice, [news]), max_shares=1)

    evergreen_recycle(evergreen=row)
    row.refresh_from_db()

    assert (row.status, row.shares_made) == ("ended", 1)
    assert evergreen_recycle(evergreen=row).share is None
    assert EvergreenShare.objects.count() == 1


def test_it_stops_at_its_end_date(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00")])
    row = mark(workspace_a, alice, published(workspace_a, alice, [news]), ends_on=date(2027, 1, 3))

    look = evergreen_recycle(evergreen=row)

    row.refresh_from_db()
    assert look.share is None and row.status == "ended"


def test_a_re_share_goes_through_approval_when_the_rule_is_on(
    workspace_a, alice, bob, news, set_slots
):
    set_slots([(MON, "09:00"), (MON, "12:00")])
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    row = mark(workspace_a, bob, published(workspace_a, alice, [news]))  # bob is an editor

    share = evergreen_recycle(evergreen=row).share

    assert share is not None
    publication = share.publication
    assert (publication.status, publication.scheduled_at) == ("draft", MON_9)
    assert Review.objects.get(publication=publication).state == Review.State.IN_REVIEW
    # Its slot stays its own while it waits: the next turn elsewhere does not take it.
    other = mark(workspace_a, bob, published(workspace_a, alice, [news], text="Other"))
    assert evergreen_recycle(evergreen=other).share.slot_at == MON_12


def test_a_re_share_waiting_for_approval_keeps_its_slot_from_add_to_queue(
    workspace_a, alice, bob, news, set_slots
):
    set_slots([(MON, "09:00"), (MON, "12:00")])
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    row = mark(workspace_a, bob, published(workspace_a, alice, [news]))
    assert evergreen_recycle(evergreen=row).share.slot_at == MON_9  # a draft, in review

    queued = queued_publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Added to the queue"}],
        destinations=[{"account": news.pk}],
    )

    assert queued.scheduled_at == MON_12  # not the re-share's 09:00, where it goes once approved


def test_texts_are_taken_in_turn(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00"), (TUE, "09:00")])
    row = mark(
        workspace_a,
        alice,
        published(workspace_a, alice, [news]),
        every_days=1,
        min_gap_days=0,
        variations=("Our guide, again",),
    )
    first = evergreen_recycle(evergreen=row).share
    Rendition.objects.filter(publication=first.publication).update(
        status=Rendition.Status.PUBLISHED, published_at=MON_9
    )
    Publication.objects.filter(pk=first.publication_id).update(status="published")
    queued_publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Between"}],
        destinations=[{"account": news.pk}],
    )  # Tuesday: the post does not follow itself

    second = evergreen_recycle(evergreen=row, now=MON_9 + timedelta(days=1)).share

    assert first.text == "Our guide, again"
    assert second is not None and second.text == "Our guide"


def test_a_repeat_is_left_out_where_the_platform_refuses_it(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00")])
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="onx")
    source = published(workspace_a, alice, [news, x])
    row = mark(workspace_a, alice, source)

    share = evergreen_recycle(evergreen=row).share

    assert share is not None
    assert [r.social_account for r in share.publication.renditions.all()] == [news]
    assert share.left_out == [
        {"account": x.pk, "handle": "onx", "platform": "x", "reason": "repeat_refused"}
    ]


def test_a_turn_refused_everywhere_is_skipped(workspace_a, alice, set_slots):
    set_slots([(MON, "09:00")])
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="onx")
    row = mark(workspace_a, alice, published(workspace_a, alice, [x]))

    look = evergreen_recycle(evergreen=row)

    assert look.share is not None and look.share.status == "skipped"
    assert look.share.publication is None
    assert not Publication.objects.filter(reference_key__startswith="evergreen").exists()


def test_no_free_slot_within_the_week_makes_nothing(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00")])
    queued_publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Taken"}],
        destinations=[{"account": news.pk}],
    )
    row = mark(workspace_a, alice, published(workspace_a, alice, [news]))

    look = evergreen_recycle(evergreen=row)

    assert look.share is None and look.note["code"] == "NO_FREE_SLOT"
    assert look.next_check_at == NOW + timedelta(hours=1)


def test_pause_withdraws_the_waiting_re_share_and_resume_starts_again(
    workspace_a, alice, news, set_slots
):
    set_slots([(MON, "09:00")])
    row = mark(workspace_a, alice, published(workspace_a, alice, [news]))
    share = evergreen_recycle(evergreen=row).share

    evergreen_pause(evergreen=row)

    share.refresh_from_db()
    assert share.status == "withdrawn"
    assert share.publication.status == "cancelled"
    assert evergreen_recycle(evergreen=row).share is None  # paused
    evergreen_resume(evergreen=row)
    assert evergreen_recycle(evergreen=row).share.number == 2


def test_skip_and_stop(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00"), (TUE, "09:00")])
    row = mark(workspace_a, alice, published(workspace_a, alice, [news]))

    skipped = evergreen_skip(evergreen=row)

    assert (skipped.number, skipped.status, skipped.slot_at) == (1, "skipped", NOW)
    assert lineage(row).last_turn == NOW
    evergreen_stop(evergreen=row)
    row.refresh_from_db()
    assert row.status == "ended"
    with pytest.raises(Conflict):
        evergreen_skip(evergreen=row)


def test_the_sweep_looks_only_at_due_posts(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00")])
    due = mark(workspace_a, alice, published(workspace_a, alice, [news]))
    later = mark(workspace_a, alice, published(workspace_a, alice, [news], text="Later"))
    EvergreenPost.objects.filter(pk=later.pk).update(next_check_at=NOW + timedelta(days=1))

    assert evergreen_recycle_due() == 1

    assert list(EvergreenShare.objects.values_list("evergreen_id", flat=True)) == [due.pk]


def test_a_turn_is_made_once_per_number(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00"), (TUE, "09:00")])
    row = mark(workspace_a, alice, published(workspace_a, alice, [news]))
    evergreen_recycle(evergreen=row)

    with pytest.raises(IntegrityError), transaction.atomic():
        EvergreenShare.objects.create(evergreen=row, workspace=workspace_a, number=1, slot_at=TUE_9)


def test_a_post_of_another_workspace_cannot_be_marked(workspace_a, workspace_b, alice, charlie):
    theirs_account = SocialAccountFactory(workspace=workspace_b, platform="sandbox")
    theirs = published(workspace_b, charlie, [theirs_account])

    with pytest.raises(NotFound):
        mark(workspace_a, alice, theirs)


def test_settings_are_checked(workspace_a, alice, news):
    with pytest.raises(ValidationFailed) as refused:
        mark(workspace_a, alice, published(workspace_a, alice, [news]), every_days=0)
    assert "every_days" in refused.value.details


def test_one_workspace_slots_and_posts_do_not_touch_another(
    workspace_a, workspace_b, alice, charlie, news, set_slots
):
    set_slots([(MON, "09:00")])
    theirs_account = SocialAccountFactory(workspace=workspace_b, platform="sandbox")
    theirs = mark(workspace_b, charlie, published(workspace_b, charlie, [theirs_account]))
    ours = mark(workspace_a, alice, published(workspace_a, alice, [news]))

    evergreen_recycle_due()

    assert ours.shares.count() == 1
    assert theirs.shares.count() == 0  # workspace B has no slots
    assert EvergreenPost.objects.for_workspace(workspace_b).get().note["code"] == ("NO_QUEUE_SLOTS")


def test_a_suspended_organizations_posts_wait(workspace_a, alice, news, set_slots, org_a):
    set_slots([(MON, "09:00")])
    mark(workspace_a, alice, published(workspace_a, alice, [news]))
    Organization.objects.filter(pk=org_a.pk).update(state=Organization.State.SUSPENDED)

    assert evergreen_recycle_due() == 0

    Organization.objects.filter(pk=org_a.pk).update(state=Organization.State.ACTIVE)
    assert evergreen_recycle_due() == 1


def test_the_sweep_goes_on_in_batches_within_its_budget(workspace_a, alice, news, blog, set_slots):
    set_slots([(MON, "09:00"), (TUE, "09:00")])
    for account in (news, blog):
        mark(workspace_a, alice, published(workspace_a, alice, [account], text=account.handle))

    assert evergreen_recycle_due(limit=1) == 1
    assert evergreen_recycle_due(limit=1, budget_s=60) == 1
    assert EvergreenShare.objects.count() == 2


def test_it_never_goes_out_twice_in_a_row_on_an_account(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00"), (MON, "12:00")])
    source = published(workspace_a, alice, [news], at=NOW - timedelta(days=3), alone=True)
    row = mark(workspace_a, alice, source, every_days=1, min_gap_days=0)

    look = evergreen_recycle(evergreen=row)

    assert look.share is None and look.note["code"] == "FOLLOWS_ITSELF"
    assert "Its last post on @news before each free slot" in look.note["message"]
    queued_publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Something else"}],
        destinations=[{"account": news.pk}],
    )  # takes Monday 09:00
    assert evergreen_recycle(evergreen=row).share.slot_at == MON_12


def test_a_repeat_is_refused_by_x_by_linkedin_for_two_days_never_by_facebook(workspace_a, alice):
    linked = SocialAccountFactory(workspace=workspace_a, platform="linkedin", handle="co")
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="onx")
    page = SocialAccountFactory(workspace=workspace_a, platform="facebook", handle="page")
    source = published(workspace_a, alice, [linked, x, page])
    row = mark(workspace_a, alice, source)
    history = lineage(row)
    renditions = list(source.renditions.select_related("social_account").order_by("pk"))

    weeks_later = repeat_outlook(history, renditions, "Our guide", at=NOW)
    next_day = repeat_outlook(history, renditions, "Our guide", at=LONG_AGO + timedelta(hours=36))
    other_text = repeat_outlook(history, renditions, "Our guide, again", at=NOW)

    # Facebook refuses only a status identical to the one just before it: never the case.
    assert [o.refused for o in weeks_later] == [False, True, False]
    assert [o.refused for o in next_day] == [True, True, False]  # LinkedIn's may last 48 h
    assert [o.refused for o in other_text] == [False, False, False]


def test_disabled_destinations_make_no_turn(workspace_a, alice, news, set_slots):
    set_slots([(MON, "09:00")])
    row = mark(workspace_a, alice, published(workspace_a, alice, [news]))
    news.status = "disabled"
    news.save()

    look = evergreen_recycle(evergreen=row)

    assert look.share is None and look.note["code"] == "NO_DESTINATIONS"
    assert not EvergreenShare.objects.exists()


def test_a_turn_copies_the_parts_media_settings_and_first_comment(
    workspace_a, alice, news, set_slots
):
    from tests.factories import MediaAssetFactory

    set_slots([(MON, "09:00")])
    image = MediaAssetFactory(workspace=workspace_a)
    source = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[
            {"text": "One", "media": [{"id": image.pk, "alt_text": "A chart"}]},
            {"text": "Two"},
        ],
        destinations=[{"account": news.pk, "settings": {}}],
        first_comment="More below",
    )
    row = mark(workspace_a, alice, source, variations=("Uno",))

    publication = evergreen_recycle(evergreen=row).share.publication

    segments = list(publication.segments.order_by("position"))
    assert [s.text for s in segments] == ["Uno", "Two"]
    links = list(segments[0].media_links.all())
    assert [(m.media_id, m.alt_text) for m in links] == [(image.pk, "A chart")]
    assert publication.first_comment == "More below"

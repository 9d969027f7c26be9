from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest

from apps.common.errors import Conflict, NotFound, ValidationFailed
from apps.publications.models import Publication
from apps.publishing import services
from apps.renditions.models import Rendition
from tests.factories import MediaAssetFactory, SocialAccountFactory
from tests.publications.conftest import NOW

pytestmark = pytest.mark.usefixtures("frozen")

TOMORROW = NOW + timedelta(days=1)


def create(workspace, accounts, **kwargs):
    kwargs.setdefault("segments", [{"text": "Hello"}])
    return services.publication_create(
        workspace=workspace, author=None, destinations=[a.pk for a in accounts], **kwargs
    )


def update(publication, **changes):
    return services.publication_update(
        publication=publication, expected_revision=publication.revision, **changes
    )


def test_an_edit_bumps_the_revision_and_rewrites_following_renditions(workspace_a, sandbox_a):
    publication = create(workspace_a, [sandbox_a])

    updated = update(publication, segments=[{"text": "Edited"}, {"text": "More"}])

    assert updated.revision == 2
    assert [s.text for s in updated.segments.all()] == ["Edited", "More"]
    rendition = updated.renditions.get()
    assert [s.text for s in rendition.segments.all()] == ["Edited", "More"]
    assert [s.source_segment.position for s in rendition.segments.all()] == [0, 1]


def test_a_stale_revision_is_a_conflict_and_changes_nothing(workspace_a, sandbox_a):
    publication = create(workspace_a, [sandbox_a])
    update(publication, segments=["First edit"])

    with pytest.raises(Conflict) as caught:
        services.publication_update(
            publication=publication, expected_revision=1, segments=["Second edit"]
        )

    assert caught.value.code == "REVISION_CONFLICT"
    assert caught.value.details == {"current_revision": 2, "expected_revision": 1}
    publication.refresh_from_db()
    assert publication.segments.get().text == "First edit"
    assert publication.revision == 2


def test_unknown_fields_are_refused(workspace_a):
    publication = create(workspace_a, [])

    with pytest.raises(ValidationFailed) as caught:
        update(publication, colour="blue")

    assert caught.value.details == {"colour": ["Unknown field."]}


def test_a_rendition_with_its_own_content_keeps_it_when_the_source_changes(
    workspace_a, sandbox_a, mastodon_a
):
    publication = services.publication_create(
        workspace=workspace_a,
        author=None,
        segments=["Source"],
        destinations=[sandbox_a.pk, {"account": mastodon_a.pk, "segments": ["Own words"]}],
    )

    update(publication, segments=["New source"])

    texts = {r.platform: [s.text for s in r.segments.all()] for r in publication.renditions.all()}
    assert texts == {"sandbox": ["New source"], "mastodon": ["Own words"]}


def test_a_published_rendition_is_never_rewritten(workspace_a, sandbox_a, mastodon_a):
    publication = create(workspace_a, [sandbox_a, mastodon_a], status="scheduled")
    done = publication.renditions.get(social_account=sandbox_a)
    done.mark_publishing()
    done.mark_published("1", "https://example.com/1")

    update(publication, segments=["Fixed typo"])

    assert done.segments.get().text == "Hello"
    assert publication.renditions.get(social_account=mastodon_a).segments.get().text == (
        "Fixed typo"
    )


def test_scheduling_a_draft_schedules_its_renditions(workspace_a, sandbox_a):
    publication = create(workspace_a, [sandbox_a], scheduled_at=TOMORROW)

    with mock.patch("apps.publishing.delivery.enqueue.rendition_schedule_delivery") as hook:
        updated = update(publication, status="scheduled")

    assert updated.status == "scheduled"
    assert updated.renditions.get().status == "scheduled"
    hook.assert_called_once()


def test_scheduling_a_draft_whose_time_has_passed_is_refused(workspace_a, sandbox_a, frozen):
    publication = create(workspace_a, [sandbox_a], scheduled_at=NOW + timedelta(minutes=5))
    frozen.shift(timedelta(minutes=16))

    with pytest.raises(ValidationFailed) as caught:
        update(publication, status="scheduled")

    assert caught.value.code == "SCHEDULE_IN_PAST"
    assert publication.renditions.get().status == "draft"


def test_unscheduling_goes_back_to_draft_and_cancels_delivery(workspace_a, sandbox_a):
    publication = create(workspace_a, [sandbox_a], scheduled_at=TOMORROW, status="scheduled")

    with mock.patch("apps.publishing.delivery.enqueue.rendition_cancel_delivery") as hook:
        updated = update(publication, status="draft")

    assert updated.status == "draft"
    assert updated.renditions.get().status == "draft"
    hook.assert_called_once()


def test_unscheduling_is_refused_once_something_started(workspace_a, sandbox_a, mastodon_a):
    publication = create(workspace_a, [sandbox_a, mastodon_a], status="scheduled")
    publication.renditions.get(social_account=sandbox_a).mark_publishing()

    with pytest.raises(Conflict) as caught:
        update(publication, status="draft")

    assert caught.value.code == "PUBLICATION_STARTED"


def test_moving_the_time_moves_following_renditions_only(workspace_a, sandbox_a, mastodon_a):
    own_time = NOW + timedelta(days=3)
    publication = services.publication_create(
        workspace=workspace_a,
        author=None,
        segments=["Hi"],
        destinations=[sandbox_a.pk, {"account": mastodon_a.pk, "scheduled_at": own_time}],
        scheduled_at=TOMORROW,
        status="scheduled",
    )

    with mock.patch("apps.publishing.delivery.enqueue.rendition_schedule_delivery") as hook:
        update(publication, scheduled_at=TOMORROW + timedelta(hours=2))

    (call,) = hook.call_args_list
    assert call.args[0].social_account == sandbox_a
    assert call.args[0].effective_scheduled_at == TOMORROW + timedelta(hours=2)
    assert publication.renditions.get(social_account=mastodon_a).effective_scheduled_at == own_time


def test_adding_a_destination_to_a_scheduled_publication_schedules_it(
    workspace_a, sandbox_a, mastodon_a
):
    publication = create(workspace_a, [sandbox_a], scheduled_at=TOMORROW, status="scheduled")

    with mock.patch("apps.publishing.delivery.enqueue.rendition_schedule_delivery") as hook:
        update(publication, destinations=[sandbox_a.pk, mastodon_a.pk])

    added = publication.renditions.get(social_account=mastodon_a)
    assert added.status == "scheduled"
    assert [c.args[0] for c in hook.call_args_list] == [added]


def test_removing_a_scheduled_destination_deletes_it_and_cancels_delivery(
    workspace_a, sandbox_a, mastodon_a
):
    publication = create(workspace_a, [sandbox_a, mastodon_a], status="scheduled")
    removed = publication.renditions.get(social_account=mastodon_a)

    seen = []
    with mock.patch(
        "apps.publishing.delivery.enqueue.rendition_cancel_delivery",
        side_effect=lambda r: seen.append((r.pk, r.status)),
    ):
        update(publication, destinations=[sandbox_a.pk])

    assert not Rendition.objects.filter(pk=removed.pk).exists()
    assert seen == [(removed.pk, "draft")]  # taken off the schedule, then deleted


def test_removing_a_failed_destination_cancels_it_and_keeps_its_history(
    workspace_a, sandbox_a, mastodon_a
):
    publication = create(workspace_a, [sandbox_a, mastodon_a], status="scheduled")
    failed = publication.renditions.get(social_account=mastodon_a)
    failed.mark_publishing()
    failed.mark_failed({"kind": "content_rejected", "message": "nope"})

    update(publication, destinations=[sandbox_a.pk])

    failed.refresh_from_db()
    assert failed.status == "cancelled"
    assert failed.last_error["kind"] == "content_rejected"


def test_a_published_destination_can_be_listed_unchanged_but_not_changed_or_removed(
    workspace_a, sandbox_a, mastodon_a
):
    publication = create(workspace_a, [sandbox_a, mastodon_a], status="scheduled")
    done = publication.renditions.get(social_account=sandbox_a)
    done.mark_publishing()
    done.mark_published("1")

    update(publication, destinations=[sandbox_a.pk, mastodon_a.pk])  # unchanged: fine
    publication.refresh_from_db()

    with pytest.raises(Conflict) as caught:
        update(
            publication,
            destinations=[{"account": sandbox_a.pk, "settings": {"x": 1}}, mastodon_a.pk],
        )
    assert caught.value.code == "RENDITION_LOCKED"
    assert caught.value.details["field"] == "destinations.0"

    with pytest.raises(Conflict) as caught:
        update(publication, destinations=[mastodon_a.pk])
    assert caught.value.code == "RENDITION_LOCKED"


def test_a_full_patch_after_a_partial_publish_rewrites_only_what_has_not_gone_out(
    workspace_a, sandbox_a, mastodon_a
):
    """Clients send the whole object back: unchanged destinations beside a source edit."""
    publication = create(workspace_a, [sandbox_a, mastodon_a], status="scheduled")
    done = publication.renditions.get(social_account=sandbox_a)
    done.mark_publishing()
    done.mark_published("1")

    update(publication, segments=["Fixed"], destinations=[sandbox_a.pk, mastodon_a.pk])

    assert done.segments.get().text == "Hello"
    assert publication.renditions.get(social_account=mastodon_a).segments.get().text == "Fixed"


def test_a_destination_override_can_be_changed_and_dropped(workspace_a, sandbox_a):
    publication = create(workspace_a, [sandbox_a])

    update(publication, destinations=[{"account": sandbox_a.pk, "segments": ["Mine"]}])
    rendition = publication.renditions.get()
    assert (rendition.overrides_content, rendition.segments.get().text) == (True, "Mine")

    publication.refresh_from_db()
    update(publication, destinations=[sandbox_a.pk])
    rendition.refresh_from_db()
    assert (rendition.overrides_content, rendition.segments.get().text) == (False, "Hello")


def test_an_edit_that_breaks_a_scheduled_rendition_is_refused(workspace_a, sandbox_a):
    sandbox_a.settings = {"text_limit": 20}
    sandbox_a.save()
    publication = create(workspace_a, [sandbox_a], status="scheduled")

    with pytest.raises(ValidationFailed) as caught:
        update(publication, segments=["This text is far longer than twenty"])

    assert list(caught.value.details) == ["destinations.0.segments.0.text"]
    publication.refresh_from_db()
    assert publication.revision == 1
    assert publication.segments.get().text == "Hello"


def test_edits_check_workspace_ownership(workspace_a, sandbox_a, account_b, media_b):
    publication = create(workspace_a, [sandbox_a])

    with pytest.raises(NotFound) as caught:
        update(publication, destinations=[sandbox_a.pk, account_b.pk])
    assert list(caught.value.details) == ["destinations.1.account"]

    with pytest.raises(NotFound) as caught:
        update(publication, segments=[{"text": "x", "media": [media_b.pk]}])
    assert list(caught.value.details) == ["segments.0.media.0.id"]


def test_the_reference_key_can_change_but_not_to_a_taken_one(workspace_a):
    taken = services.publication_create(
        workspace=workspace_a, author=None, segments=["a"], destinations=[], reference_key="a"
    )
    publication = create(workspace_a, [], reference_key="b")

    with pytest.raises(Conflict) as caught:
        update(publication, reference_key="a")
    assert caught.value.details["publication_id"] == taken.pk

    assert update(publication, reference_key="c").reference_key == "c"


def test_a_cancelled_publication_cannot_be_edited(workspace_a, sandbox_a):
    publication = create(workspace_a, [sandbox_a])
    publication = services.publication_cancel(publication=publication)

    with pytest.raises(Conflict) as caught:
        update(publication, segments=["again"])

    assert caught.value.code == "PUBLICATION_CANCELLED"


def test_media_links_are_rewritten(workspace_a, sandbox_a):
    first = MediaAssetFactory(workspace=workspace_a)
    second = MediaAssetFactory(workspace=workspace_a, alt_text="Second")
    publication = create(workspace_a, [sandbox_a], segments=[{"media": [first.pk]}])

    update(publication, segments=[{"text": "now with text", "media": [second.pk]}])

    segment = publication.renditions.get().segments.get()
    assert [(m.media, m.alt_text) for m in segment.media.all()] == [(second, "Second")]


class TestReschedule:
    def test_it_moves_the_scheduled_renditions(self, workspace_a, sandbox_a):
        publication = create(workspace_a, [sandbox_a], scheduled_at=TOMORROW, status="scheduled")

        with mock.patch("apps.publishing.delivery.enqueue.rendition_schedule_delivery") as hook:
            moved = services.publication_reschedule(
                publication=publication,
                expected_revision=1,
                local_time="2027-11-07T01:30",
                timezone="America/New_York",
            )

        assert moved.scheduled_at == datetime(2027, 11, 7, 5, 30, tzinfo=UTC)
        assert moved.timezone == "America/New_York"
        assert moved.revision == 2
        hook.assert_called_once()

    def test_local_time_defaults_to_the_publications_zone(self, workspace_a, sandbox_a):
        publication = create(
            workspace_a, [sandbox_a], local_time="2027-03-12T09:00", timezone="Europe/Warsaw"
        )

        moved = services.publication_reschedule(
            publication=publication, expected_revision=1, local_time="2027-10-31T02:30"
        )

        assert moved.scheduled_at == datetime(2027, 10, 31, 0, 30, tzinfo=UTC)
        assert moved.timezone == "Europe/Warsaw"

    def test_a_time_is_required(self, workspace_a, sandbox_a):
        publication = create(workspace_a, [sandbox_a])

        with pytest.raises(ValidationFailed) as caught:
            services.publication_reschedule(publication=publication, expected_revision=1)

        assert caught.value.code == "SCHEDULE_REQUIRED"

    def test_the_past_is_refused(self, workspace_a, sandbox_a):
        publication = create(workspace_a, [sandbox_a])

        with pytest.raises(ValidationFailed) as caught:
            services.publication_reschedule(
                publication=publication,
                expected_revision=1,
                scheduled_at=NOW - timedelta(minutes=11),
            )

        assert caught.value.code == "SCHEDULE_IN_PAST"

    def test_a_stale_revision_is_a_conflict(self, workspace_a, sandbox_a):
        publication = create(workspace_a, [sandbox_a])

        with pytest.raises(Conflict) as caught:
            services.publication_reschedule(
                publication=publication, expected_revision=7, scheduled_at=TOMORROW
            )

        assert caught.value.code == "REVISION_CONFLICT"

    def test_nothing_left_to_reschedule(self, workspace_a, sandbox_a):
        publication = create(workspace_a, [sandbox_a], status="scheduled")
        rendition = publication.renditions.get()
        rendition.mark_publishing()
        rendition.mark_published("1")

        with pytest.raises(Conflict) as caught:
            services.publication_reschedule(
                publication=publication, expected_revision=1, scheduled_at=TOMORROW
            )

        assert caught.value.code == "NOTHING_TO_RESCHEDULE"


class TestCancel:
    def test_it_cancels_what_has_not_gone_out(self, workspace_a):
        accounts = [SocialAccountFactory(workspace=workspace_a) for _ in range(5)]
        publication = create(workspace_a, accounts, status="scheduled")
        done, in_flight, clean_failure, unknown, waiting = publication.renditions.order_by("pk")
        for rendition in (done, in_flight, clean_failure, unknown):
            rendition.mark_publishing()
        done.mark_published("1")
        clean_failure.mark_failed({"kind": "rate_limited", "message": "later"}, retry_at=TOMORROW)
        unknown.mark_failed({"kind": "outcome_unknown", "message": "timeout"}, ambiguous=True)

        with mock.patch("apps.publishing.delivery.enqueue.rendition_cancel_delivery") as hook:
            cancelled = services.publication_cancel(publication=publication)

        statuses = dict(publication.renditions.values_list("pk", "status"))
        assert statuses == {
            done.pk: "published",
            in_flight.pk: "publishing",
            clean_failure.pk: "cancelled",
            unknown.pk: "failed",
            waiting.pk: "cancelled",
        }
        assert sorted(c.args[0].pk for c in hook.call_args_list) == sorted(
            [clean_failure.pk, waiting.pk]
        )
        assert cancelled.status == "publishing"  # one is still in flight
        assert cancelled.revision == 2

    def test_a_partly_published_publication_ends_published(
        self, workspace_a, sandbox_a, mastodon_a
    ):
        publication = create(workspace_a, [sandbox_a, mastodon_a], status="scheduled")
        done = publication.renditions.get(social_account=sandbox_a)
        done.mark_publishing()
        done.mark_published("1")

        assert services.publication_cancel(publication=publication).status == "published"

    def test_a_draft_without_destinations_is_cancelled(self, workspace_a):
        publication = create(workspace_a, [])

        cancelled = services.publication_cancel(publication=publication)

        cancelled.refresh_from_db()
        assert cancelled.status == Publication.Status.CANCELLED

    def test_cancelling_twice_changes_nothing(self, workspace_a, sandbox_a):
        publication = create(workspace_a, [sandbox_a])
        services.publication_cancel(publication=publication)

        again = services.publication_cancel(publication=publication)

        assert (again.status, again.revision) == ("cancelled", 2)

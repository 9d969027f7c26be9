from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest

from apps.common.errors import Conflict, NotFound, ValidationFailed
from apps.jobs.models import Job
from apps.publications.models import Publication, SegmentMedia
from apps.publishing import services
from apps.publishing.delivery.enqueue import PUBLISH_JOB, publish_dedupe_key
from apps.renditions.models import Rendition
from tests.factories import MediaAssetFactory, SocialAccountFactory
from tests.publications.conftest import NOW

pytestmark = pytest.mark.usefixtures("frozen")


def create(workspace, **kwargs):
    kwargs.setdefault("author", None)
    kwargs.setdefault("segments", [{"text": "Hello"}])
    kwargs.setdefault("destinations", [])
    return services.publication_create(workspace=workspace, **kwargs)


def test_it_creates_a_draft_with_segments_media_and_a_rendition_per_account(
    workspace_a, bob, sandbox_a, mastodon_a, jpeg_a
):
    publication = create(
        workspace_a,
        author=bob,
        segments=[
            {"text": "First", "media": [{"id": jpeg_a.pk, "alt_text": "A cat on a mat"}]},
            {"text": "Second"},
        ],
        destinations=[{"account": sandbox_a.pk}, {"account": mastodon_a.pk}],
    )

    publication.refresh_from_db()
    assert publication.status == Publication.Status.DRAFT
    assert publication.revision == 1
    assert publication.author == bob
    assert publication.scheduled_at is None
    assert publication.timezone == "UTC"
    assert [s.text for s in publication.segments.all()] == ["First", "Second"]
    link = SegmentMedia.objects.get(segment__publication=publication)
    assert (link.media, link.alt_text) == (jpeg_a, "A cat on a mat")

    renditions = list(publication.renditions.order_by("pk"))
    assert [(r.social_account, r.platform, r.status) for r in renditions] == [
        (sandbox_a, "sandbox", "draft"),
        (mastodon_a, "mastodon", "draft"),
    ]
    for rendition in renditions:
        assert rendition.workspace == workspace_a
        segments = list(rendition.segments.all())
        assert [(s.position, s.text) for s in segments] == [(0, "First"), (1, "Second")]
        assert [s.source_segment.text for s in segments] == ["First", "Second"]
        media = segments[0].media.get()
        assert (media.media, media.alt_text) == (jpeg_a, "A cat on a mat")


def test_a_destination_override_gets_its_own_segments_linked_to_the_source(
    workspace_a, sandbox_a, mastodon_a, jpeg_a
):
    publication = create(
        workspace_a,
        segments=[{"text": "Long source text"}],
        destinations=[
            {"account": sandbox_a.pk},
            {
                "account": mastodon_a.pk,
                "segments": [{"text": "Short", "media": [{"id": jpeg_a.pk}]}, "Reply"],
                "settings": {"visibility": "unlisted"},
            },
        ],
    )

    masto = publication.renditions.get(social_account=mastodon_a)
    assert masto.overrides_content is True
    assert masto.settings == {"visibility": "unlisted"}
    segments = list(masto.segments.all())
    assert [s.text for s in segments] == ["Short", "Reply"]
    assert segments[0].source_segment.text == "Long source text"
    assert segments[1].source_segment is None
    # Without an override alt text, the asset's own alt text is copied.
    assert segments[0].media.get().alt_text == "A cat"
    assert publication.renditions.get(social_account=sandbox_a).overrides_content is False


def test_scheduling_with_an_instant_schedules_every_rendition_and_enqueues_its_publish(
    workspace_a, sandbox_a, mastodon_a
):
    publication = create(
        workspace_a,
        destinations=[sandbox_a.pk, mastodon_a.pk],
        scheduled_at="2027-03-11T09:00:00+01:00",
        status="scheduled",
    )

    assert publication.status == Publication.Status.SCHEDULED
    assert publication.scheduled_at == datetime(2027, 3, 11, 8, 0, tzinfo=UTC)
    assert set(publication.renditions.values_list("status", flat=True)) == {"scheduled"}
    jobs = Job.objects.filter(type=PUBLISH_JOB, status=Job.Status.PENDING)
    assert sorted(job.payload["rendition_id"] for job in jobs) == sorted(
        publication.renditions.values_list("pk", flat=True)
    )
    assert {job.run_at for job in jobs} == {publication.scheduled_at}
    assert {job.dedupe_key for job in jobs} == {
        publish_dedupe_key(pk) for pk in publication.renditions.values_list("pk", flat=True)
    }


def test_a_local_time_is_stored_in_utc_with_its_zone(workspace_a, sandbox_a):
    publication = create(
        workspace_a,
        destinations=[sandbox_a.pk],
        local_time="2027-03-28T02:30",
        timezone="Europe/Warsaw",
        status="scheduled",
    )

    publication.refresh_from_db()
    # 02:30 does not exist that night in Warsaw: it moves forward to 03:30 CEST.
    assert publication.scheduled_at == datetime(2027, 3, 28, 1, 30, tzinfo=UTC)
    assert publication.timezone == "Europe/Warsaw"


def test_the_workspace_zone_is_recorded_when_none_is_given(workspace_a, sandbox_a):
    workspace_a.default_timezone = "America/New_York"
    workspace_a.save()

    publication = create(workspace_a, local_time="2027-03-12T09:00")

    assert publication.timezone == "America/New_York"
    assert publication.scheduled_at == datetime(2027, 3, 12, 14, 0, tzinfo=UTC)


def test_scheduled_without_a_time_means_now(workspace_a, sandbox_a):
    publication = create(workspace_a, destinations=[sandbox_a.pk], status="scheduled")

    assert publication.scheduled_at == NOW
    assert publication.status == "scheduled"


def test_a_destination_time_override_is_kept_on_the_rendition(workspace_a, sandbox_a):
    publication = create(
        workspace_a,
        destinations=[{"account": sandbox_a.pk, "scheduled_at": "2027-03-12T10:00:00Z"}],
        scheduled_at="2027-03-11T10:00:00Z",
        status="scheduled",
    )

    rendition = publication.renditions.get()
    assert rendition.scheduled_at == datetime(2027, 3, 12, 10, tzinfo=UTC)
    assert rendition.effective_scheduled_at == datetime(2027, 3, 12, 10, tzinfo=UTC)


def test_every_input_error_is_reported_by_field_path(workspace_a, sandbox_a):
    with pytest.raises(ValidationFailed) as caught:
        create(
            workspace_a,
            segments=[{"text": "ok"}, {"text": ""}, {"text": 5}, {"txt": "typo"}],
            destinations=[{"account": sandbox_a.pk}, {"account": sandbox_a.pk}, {}],
            status="published",
        )

    details = caught.value.details
    assert caught.value.code == "VALIDATION_ERROR"
    assert set(details) == {
        "segments.1.text",
        "segments.2.text",
        "segments.3.txt",
        "segments.3.text",
        "destinations.1.account",
        "destinations.2.account",
        "status",
    }
    assert Publication.objects.count() == 0


def test_a_schedule_error_keeps_its_specific_code(workspace_a, sandbox_a):
    with pytest.raises(ValidationFailed) as caught:
        create(workspace_a, scheduled_at=NOW - timedelta(minutes=11))

    assert caught.value.code == "SCHEDULE_IN_PAST"
    assert "scheduled_at" in caught.value.details


def test_a_destination_schedule_error_names_its_path(workspace_a, sandbox_a):
    with pytest.raises(ValidationFailed) as caught:
        create(
            workspace_a,
            destinations=[
                {"account": sandbox_a.pk, "local_time": "2027-03-12T09:00", "timezone": "Mars/Base"}
            ],
        )

    assert caught.value.code == "INVALID_TIMEZONE"
    assert list(caught.value.details) == ["destinations.0.timezone"]


@pytest.mark.parametrize("field", ["account", "media"])
def test_another_workspaces_ids_are_not_found(workspace_a, account_b, media_b, sandbox_a, field):
    destinations = [{"account": sandbox_a.pk}]
    segments = [{"text": "hi"}]
    if field == "account":
        destinations.append({"account": account_b.pk})
        path = "destinations.1.account"
    else:
        segments.append({"text": "x", "media": [{"id": media_b.pk}]})
        path = "segments.1.media.0.id"

    with pytest.raises(NotFound) as caught:
        create(workspace_a, segments=segments, destinations=destinations)

    assert caught.value.details == {path: [mock.ANY]}
    assert Publication.objects.count() == 0


def test_media_of_another_workspace_in_an_override_is_not_found(workspace_a, sandbox_a, media_b):
    with pytest.raises(NotFound) as caught:
        create(
            workspace_a,
            destinations=[{"account": sandbox_a.pk, "segments": [{"media": [{"id": media_b.pk}]}]}],
        )

    assert list(caught.value.details) == ["destinations.0.segments.0.media.0.id"]


def test_a_reused_reference_key_is_a_conflict_naming_the_existing_publication(workspace_a):
    first = create(workspace_a, reference_key="series-7:2027-03-12")

    with pytest.raises(Conflict) as caught:
        create(workspace_a, reference_key="series-7:2027-03-12")

    assert caught.value.code == "REFERENCE_KEY_EXISTS"
    assert caught.value.details["publication_id"] == first.pk


def test_the_same_reference_key_is_free_in_another_workspace(workspace_a, workspace_b):
    create(workspace_a, reference_key="k")
    other = create(workspace_b, reference_key="k")

    assert other.reference_key == "k"


def test_scheduling_refuses_renditions_with_problems_and_reports_them_all(
    workspace_a, sandbox_a, instagram_a
):
    sandbox_a.settings = {"text_limit": 10}
    sandbox_a.save()

    with pytest.raises(ValidationFailed) as caught:
        create(
            workspace_a,
            segments=[{"text": "Far more than ten graphemes"}, {"text": "second"}],
            destinations=[sandbox_a.pk, instagram_a.pk],
            status="scheduled",
        )

    details = caught.value.details
    assert set(details) == {
        "destinations.0.segments.0.text",
        "destinations.1.segments",
        "destinations.1.segments.0.media",
    }
    assert "allows 10" in details["destinations.0.segments.0.text"][0]
    assert Publication.objects.count() == 0
    assert Rendition.objects.count() == 0


def test_a_draft_may_be_saved_with_problems(workspace_a, instagram_a):
    publication = create(workspace_a, destinations=[instagram_a.pk])

    assert publication.status == "draft"
    from apps.publishing.selectors import publication_problems

    codes = [(p.path, p.code) for p in publication_problems(publication=publication)]
    assert codes == [("destinations.0.segments.0.media", "MEDIA_REQUIRED")]


def test_scheduling_needs_a_destination(workspace_a):
    with pytest.raises(ValidationFailed) as caught:
        create(workspace_a, status="scheduled")

    assert list(caught.value.details) == ["destinations"]


def test_a_disabled_account_cannot_be_scheduled(workspace_a):
    account = SocialAccountFactory(workspace=workspace_a, status="disabled")

    with pytest.raises(ValidationFailed) as caught:
        create(workspace_a, destinations=[account.pk], status="scheduled")

    assert list(caught.value.details) == ["destinations.0.account"]


def test_media_only_segments_are_accepted(workspace_a, sandbox_a):
    image = MediaAssetFactory(workspace=workspace_a)

    publication = create(
        workspace_a,
        segments=[{"media": [image.pk]}],
        destinations=[sandbox_a.pk],
        status="scheduled",
    )

    assert publication.segments.get().text == ""
    assert publication.status == "scheduled"

from datetime import UTC, datetime, timedelta

import pytest

from apps.common.errors import QuotaExceeded
from apps.publications.models import Publication
from apps.publishing import services
from apps.publishing.quotas import day_bounds, month_bounds
from apps.renditions.models import Rendition
from tests.factories import WorkspaceFactory
from tests.publications.conftest import NOW

pytestmark = pytest.mark.usefixtures("frozen")

DAY = datetime(2027, 3, 12, 15, 0, tzinfo=UTC)


def create(workspace, **kwargs):
    kwargs.setdefault("segments", ["Hello"])
    kwargs.setdefault("destinations", [])
    return services.publication_create(workspace=workspace, author=None, **kwargs)


class TestMonthlyQuota:
    def test_the_last_unit_is_granted_and_the_next_one_refused(self, org_a, workspace_a):
        org_a.monthly_post_quota = 3
        org_a.save()
        other_workspace = WorkspaceFactory(organization=org_a)
        create(workspace_a)
        create(other_workspace)  # the quota is the organization's, across workspaces

        create(workspace_a)
        with pytest.raises(QuotaExceeded) as caught:
            create(workspace_a)

        assert caught.value.code == "MONTHLY_QUOTA_EXCEEDED"
        assert caught.value.http_status == 409
        assert caught.value.details == {
            "limit": 3,
            "used": 3,
            "period": "2027-03",
            "resets_at": "2027-04-01T00:00:00+00:00",
        }
        assert "3 publications" in caught.value.message
        assert Publication.objects.count() == 3

    def test_last_months_publications_do_not_count(self, org_a, workspace_a, frozen):
        org_a.monthly_post_quota = 1
        org_a.save()
        frozen.move_to(datetime(2027, 2, 28, 23, 59, 59, tzinfo=UTC))
        create(workspace_a)

        frozen.move_to(datetime(2027, 3, 1, 0, 0, tzinfo=UTC))
        create(workspace_a)

    def test_other_organizations_do_not_count(self, org_a, workspace_a, workspace_b):
        org_a.monthly_post_quota = 1
        org_a.save()
        create(workspace_b)

        create(workspace_a)

    def test_drafts_count_at_creation(self, org_a, workspace_a):
        org_a.monthly_post_quota = 1
        org_a.save()
        services.publication_cancel(publication=create(workspace_a))

        with pytest.raises(QuotaExceeded):
            create(workspace_a)


def fill_day(account, count, when=DAY, status=Rendition.Status.SCHEDULED):
    """count renditions of account due at when, each on its own publication."""
    publications = Publication.objects.bulk_create(
        [
            Publication(workspace=account.workspace, scheduled_at=when, status="scheduled")
            for _ in range(count)
        ]
    )
    Rendition.objects.bulk_create(
        [
            Rendition(
                publication=p,
                workspace=account.workspace,
                social_account=account,
                platform=account.platform,
                status=status,
                published_at=when if status == Rendition.Status.PUBLISHED else None,
            )
            for p in publications
        ]
    )


class TestDailyCap:
    """Instagram states 100 posts per 24 h in the catalog."""

    def schedule(self, workspace, account, media, when=DAY):
        return create(
            workspace,
            segments=[{"text": "pic", "media": [media.pk]}],
            destinations=[account.pk],
            scheduled_at=when,
            status="scheduled",
        )

    def test_the_100th_post_of_the_day_is_granted_and_the_101st_refused(
        self, workspace_a, instagram_a, jpeg_a
    ):
        fill_day(instagram_a, 98)
        fill_day(instagram_a, 1, status=Rendition.Status.PUBLISHED)

        self.schedule(workspace_a, instagram_a, jpeg_a)
        with pytest.raises(QuotaExceeded) as caught:
            self.schedule(workspace_a, instagram_a, jpeg_a)

        assert caught.value.code == "DAILY_CAP_EXCEEDED"
        assert caught.value.details == {
            "field": "destinations.0.account",
            "account": instagram_a.pk,
            "handle": "insta",
            "platform": "instagram",
            "limit": 100,
            "used": 100,
            "day": "2027-03-12",
        }
        assert "@insta" in caught.value.message

    def test_the_day_is_the_utc_day_of_the_target_time(self, workspace_a, instagram_a, jpeg_a):
        fill_day(instagram_a, 100)
        # 00:30 on the 13th in Warsaw is still the 12th in UTC: refused.
        with pytest.raises(QuotaExceeded):
            create(
                workspace_a,
                segments=[{"media": [jpeg_a.pk]}],
                destinations=[instagram_a.pk],
                local_time="2027-03-13T00:30",
                timezone="Europe/Warsaw",
                status="scheduled",
            )

        self.schedule(workspace_a, instagram_a, jpeg_a, when=DAY + timedelta(days=1))

    def test_drafts_cancelled_and_clean_failures_do_not_count(
        self, workspace_a, instagram_a, jpeg_a
    ):
        fill_day(instagram_a, 97)
        fill_day(instagram_a, 5, status=Rendition.Status.DRAFT)
        fill_day(instagram_a, 5, status=Rendition.Status.CANCELLED)
        fill_day(instagram_a, 5, status=Rendition.Status.FAILED)

        self.schedule(workspace_a, instagram_a, jpeg_a)
        self.schedule(workspace_a, instagram_a, jpeg_a)
        self.schedule(workspace_a, instagram_a, jpeg_a)
        with pytest.raises(QuotaExceeded):
            self.schedule(workspace_a, instagram_a, jpeg_a)

    def test_a_pending_retry_and_an_ambiguous_outcome_count(self, workspace_a, instagram_a, jpeg_a):
        fill_day(instagram_a, 98)
        fill_day(instagram_a, 2, status=Rendition.Status.FAILED)
        failed = list(Rendition.objects.filter(status="failed"))
        Rendition.objects.filter(pk=failed[0].pk).update(next_retry_at=DAY)
        Rendition.objects.filter(pk=failed[1].pk).update(ambiguous=True)

        with pytest.raises(QuotaExceeded):
            self.schedule(workspace_a, instagram_a, jpeg_a)

    def test_drafts_are_not_checked(self, workspace_a, instagram_a, jpeg_a):
        fill_day(instagram_a, 100)

        draft = create(workspace_a, destinations=[instagram_a.pk], scheduled_at=DAY)

        assert draft.status == "draft"

    def test_a_reschedule_is_checked_against_the_new_day(self, workspace_a, instagram_a, jpeg_a):
        publication = self.schedule(workspace_a, instagram_a, jpeg_a, when=DAY)
        fill_day(instagram_a, 100, when=DAY + timedelta(days=1))

        with pytest.raises(QuotaExceeded) as caught:
            services.publication_reschedule(
                publication=publication,
                expected_revision=1,
                scheduled_at=DAY + timedelta(days=1),
            )
        assert caught.value.code == "DAILY_CAP_EXCEEDED"

        # Moving within its own day does not count itself twice.
        fill_day(instagram_a, 99, when=DAY)
        services.publication_reschedule(
            publication=publication, expected_revision=1, scheduled_at=DAY + timedelta(hours=1)
        )

    def test_platforms_without_a_stated_cap_are_not_limited(self, workspace_a, mastodon_a):
        fill_day(mastodon_a, 300)

        create(workspace_a, destinations=[mastodon_a.pk], scheduled_at=DAY, status="scheduled")


def test_bounds_are_utc():
    assert month_bounds(datetime(2027, 12, 31, 23, tzinfo=UTC)) == (
        datetime(2027, 12, 1, tzinfo=UTC),
        datetime(2028, 1, 1, tzinfo=UTC),
    )
    assert day_bounds(NOW) == (
        datetime(2027, 3, 10, tzinfo=UTC),
        datetime(2027, 3, 11, tzinfo=UTC),
    )

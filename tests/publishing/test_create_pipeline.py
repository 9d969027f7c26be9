"""The create pipeline's batch rules that no single entry point shows on its own: a key
repeated within a batch answers with its first item's outcome, whatever that was; an
all-or-nothing batch raises its first refusal and writes nothing; a single create counts
the daily cap of each capped account it names."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from apps.common.errors import QuotaExceeded
from apps.publications.models import Publication
from apps.publishing.services import publication_create
from apps.publishing.services.create_pipeline import OutcomeStatus, create_publications
from apps.renditions.models import Rendition
from tests.factories import MediaAssetFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def sandbox_a(workspace_a):
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="news")


def _item(account, key=None, **extra):
    return {
        "text": "Hello",
        "destinations": [{"account": account.pk}],
        "status": "scheduled",
        "scheduled_at": (timezone.now() + timedelta(hours=2)).isoformat(),
        "reference_key": key,
        **extra,
    }


def _batch(workspace, items, **options):
    with transaction.atomic():
        return create_publications(
            workspace=workspace,
            author=None,
            items=items,
            existing_keys_answer=options.get("existing_keys_answer", True),
            all_or_nothing=options.get("all_or_nothing", False),
        )


def test_a_repeated_key_answers_with_the_first_items_publication(workspace_a, sandbox_a):
    outcomes = _batch(workspace_a, [_item(sandbox_a, "k"), _item(sandbox_a, "k")])

    assert [o.status for o in outcomes] == [OutcomeStatus.CREATED, OutcomeStatus.EXISTS]
    assert outcomes[0].publication == outcomes[1].publication
    assert Publication.objects.count() == 1


def test_a_repeated_key_shares_the_refusal_of_its_first_item(workspace_a, sandbox_a, org_a):
    org_a.monthly_post_quota = 0
    org_a.save()

    outcomes = _batch(workspace_a, [_item(sandbox_a, "k"), _item(sandbox_a, "k")])

    assert [o.status for o in outcomes] == [OutcomeStatus.ERROR, OutcomeStatus.ERROR]
    assert {o.error.code for o in outcomes} == {"MONTHLY_QUOTA_EXCEEDED"}
    assert not Publication.objects.exists()


def test_an_all_or_nothing_batch_raises_its_first_refusal_and_writes_nothing(
    workspace_a, sandbox_a, org_a
):
    org_a.monthly_post_quota = 1
    org_a.save()

    with pytest.raises(QuotaExceeded) as refused:
        _batch(
            workspace_a,
            [_item(sandbox_a, "a"), _item(sandbox_a, "b")],
            existing_keys_answer=False,
            all_or_nothing=True,
        )

    assert refused.value.code == "MONTHLY_QUOTA_EXCEEDED"
    assert not Publication.objects.exists()


def _fill_day(account, count, when):
    """count scheduled renditions of account due at when, each on its own publication."""
    publications = Publication.objects.bulk_create(
        [
            Publication(workspace=account.workspace, scheduled_at=when, status="scheduled")
            for _ in range(count)
        ]
    )
    Rendition.objects.bulk_create(
        Rendition(
            publication=p,
            workspace=account.workspace,
            social_account=account,
            platform=account.platform,
            status=Rendition.Status.SCHEDULED,
        )
        for p in publications
    )


def test_a_single_create_counts_each_capped_account_of_its_destinations(workspace_a):
    """Instagram states 100 posts a day: one account has room for one more, the other
    none; the create is refused naming the full one, with what it holds."""
    roomy = SocialAccountFactory(workspace=workspace_a, platform="instagram", handle="roomy")
    full = SocialAccountFactory(workspace=workspace_a, platform="instagram", handle="full")
    photo = MediaAssetFactory(workspace=workspace_a, mime_type="image/jpeg", alt_text="A cat")
    at = (timezone.now() + timedelta(days=2)).replace(hour=12)
    _fill_day(roomy, 99, at)
    _fill_day(full, 100, at)

    def schedule(*accounts):
        return publication_create(
            workspace=workspace_a,
            author=None,
            segments=[{"text": "pic", "media": [{"id": photo.pk}]}],
            destinations=[{"account": account.pk} for account in accounts],
            status="scheduled",
            scheduled_at=at.isoformat(),
        )

    with pytest.raises(QuotaExceeded) as refused:
        schedule(roomy, full)

    assert refused.value.code == "DAILY_CAP_EXCEEDED"
    assert refused.value.details["field"] == "destinations.1.account"
    assert (refused.value.details["handle"], refused.value.details["used"]) == ("full", 100)
    assert schedule(roomy).status == Publication.Status.SCHEDULED

from datetime import UTC, datetime

import pytest

from apps.publishing.services import publication_refresh_status
from apps.publishing.status import RenditionState, aggregate_status
from tests.factories import PublicationFactory, RenditionFactory

D, S, PG, W, PD, F, C = (
    "draft",
    "scheduled",
    "publishing",
    "waiting",
    "published",
    "failed",
    "cancelled",
)
RETRY = "failed+retry"  # failed with a retry pending


def states(*names):
    return [
        RenditionState(F, retry_pending=True) if name == RETRY else RenditionState(name)
        for name in names
    ]


@pytest.mark.parametrize(
    "renditions, expected",
    [
        # 1. none
        ((), "draft"),
        # 2. all cancelled; cancelled ignored beside others
        ((C,), "cancelled"),
        ((C, C), "cancelled"),
        ((C, PD), "published"),
        ((C, F), "failed"),
        ((C, D), "draft"),
        # 3. all draft
        ((D,), "draft"),
        ((D, D), "draft"),
        # 4. nothing started
        ((S,), "scheduled"),
        ((S, S), "scheduled"),
        ((D, S), "scheduled"),
        ((C, S), "scheduled"),
        # 5. in flight
        ((PG,), "publishing"),
        ((W,), "publishing"),
        ((PD, W), "publishing"),
        ((F, PG), "publishing"),
        ((S, PG), "publishing"),
        # 6. work remains beside finished ones
        ((PD, S), "publishing"),
        ((F, S), "publishing"),
        ((PD, RETRY), "publishing"),
        ((RETRY,), "publishing"),
        ((F, RETRY), "publishing"),
        ((PD, D), "publishing"),
        # 7. all finished
        ((PD,), "published"),
        ((PD, PD), "published"),
        ((F,), "failed"),
        ((F, F), "failed"),
        ((PD, F), "partially_published"),
        ((PD, F, C), "partially_published"),
    ],
)
def test_aggregate(renditions, expected):
    assert aggregate_status(states(*renditions)) == expected


def test_a_cancelled_publication_without_renditions_stays_cancelled():
    assert aggregate_status([], current="cancelled") == "cancelled"
    assert aggregate_status([], current="scheduled") == "draft"


def test_refresh_reads_the_renditions_and_stores_the_aggregate(db):
    publication = PublicationFactory(status="scheduled")
    RenditionFactory(publication=publication, status="published", published_at=datetime.now(UTC))
    RenditionFactory(
        publication=publication,
        status="failed",
        next_retry_at=datetime(2030, 1, 1, tzinfo=UTC),
        last_error={"kind": "rate_limited", "message": "slow down"},
    )

    publication_refresh_status(publication)
    publication.refresh_from_db()
    assert publication.status == "publishing"

    publication.renditions.filter(status="failed").update(next_retry_at=None)
    publication_refresh_status(publication)
    publication.refresh_from_db()
    assert publication.status == "partially_published"


def test_an_ambiguous_failure_is_finished_not_pending(db):
    publication = PublicationFactory(status="publishing")
    RenditionFactory(publication=publication, status="failed", ambiguous=True)

    assert publication_refresh_status(publication).status == "failed"

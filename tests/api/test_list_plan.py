"""The API's list reads the page it shows: a large workspace whose posts are older than
another tenant's reads its own newest rows, not the primary key back past the other
tenant's (the plan the statistics of two equal tenants gave a plain `ORDER BY id DESC`)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from loadtest.bench_pages import fill
from tests.factories import SocialAccountFactory, WorkspaceFactory
from tests.plans import BIG_TABLES, analyze, assert_bounded, fresh, reads

pytestmark = pytest.mark.django_db

URL = "/api/v1/publications"


@pytest.fixture
def beside_a_newer_tenant(workspace_a):
    """Workspace A with 1,500 posts (two destinations each), then a tenant of the same
    size written after it (every id of its posts above A's)."""
    fresh(*BIG_TABLES)
    start = timezone.now() + timedelta(hours=1)
    fill(
        workspace_a,
        [SocialAccountFactory(workspace=workspace_a) for _ in range(2)],
        1500,
        start=start,
    )
    other = WorkspaceFactory()
    fill(other, [SocialAccountFactory(workspace=other) for _ in range(2)], 1500, start=start)
    analyze(*BIG_TABLES)


def test_a_page_of_fifty_reads_fifty_posts_and_their_parts(api_a, beside_a_newer_tenant):
    first = api_a.get(URL, {"limit": 50}).json()
    assert len(first["results"]) == 50

    scans = reads(lambda: api_a.get(URL, {"limit": 50}), BIG_TABLES)
    scans += reads(lambda: api_a.get(first["next"]), BIG_TABLES)

    assert {s.table for s in scans} >= {"publications_publication", "renditions_rendition"}
    # 51 ids a page (one to tell whether a next page exists), each post's row, its
    # segment and its two destinations.
    assert_bounded(scans, max_rows=2 * 51)

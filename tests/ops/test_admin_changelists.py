"""Admin changelists over the big tables cost the same queries for any number of tenants:
no per-row organization query, no date hierarchy or DISTINCT over a column, and a count
that stops at a bound."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.common.admin_paging import BoundedCountPaginator
from apps.jobs.models import Job
from apps.publications.models import Publication
from loadtest.bench_pages import fill
from tests.factories import SocialAccountFactory, WorkspaceFactory

pytestmark = pytest.mark.django_db

PAGES = [
    "/admin/publications/publication/",
    "/admin/renditions/rendition/",
    "/admin/jobs/job/",
    "/admin/audit/auditevent/",
    "/admin/security/authattempt/",
]


def tenants(n: int) -> None:
    for _ in range(n):
        workspace = WorkspaceFactory()
        account = SocialAccountFactory(workspace=workspace)
        fill(workspace, [account], 2, start=timezone.now() + timedelta(days=1))


def sqls(admin_client, url: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert admin_client.get(url).status_code == 200
    return [q["sql"] for q in captured.captured_queries]


@pytest.mark.parametrize("url", PAGES)
def test_a_changelist_costs_the_same_for_40_tenants_as_for_2(admin_client, url):
    tenants(2)
    admin_client.get(url)
    few = sqls(admin_client, url)
    tenants(38)
    many = sqls(admin_client, url)
    assert len(many) == len(few)
    for sql in many:
        assert "DISTINCT" not in sql.upper(), sql
        assert not re.search(r"date_trunc|django_datetime_trunc", sql, re.I), sql


def test_the_changelist_count_stops_at_its_bound(admin_client, monkeypatch):
    tenants(3)  # 6 publications
    monkeypatch.setattr(BoundedCountPaginator, "CAP", 4)
    captured = sqls(admin_client, "/admin/publications/publication/?status=scheduled")
    counts = [sql for sql in captured if "COUNT(" in sql.upper()]
    assert counts and all("LIMIT 5" in sql for sql in counts), counts
    assert Publication.objects.count() == 6
    assert Job.objects.count() == 6

"""Reading query plans in tests: what a page's statements scan, and how many rows.

`reads(run, tables)` runs `run` while capturing its statements, then EXPLAIN ANALYZEs each
SELECT that names one of `tables` and returns, per table, the scans of it (node type and
rows read: the rows a scan returned plus the rows its filter dropped, over its loops).
A test fills the tables with many idle tenants and finished rows, ANALYZEs them, and
asserts the page reads no table whole (no Seq Scan) and a bounded number of rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.db import connection
from django.test.utils import CaptureQueriesContext


@dataclass(frozen=True)
class Scan:
    table: str
    node: str
    rows: int  # read: returned + removed by its filter, over all loops
    sql: str


def explain(sql: str, params: list | tuple | None = None) -> dict:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
        raw = cursor.fetchone()[0]
    plan = raw if isinstance(raw, list) else json.loads(raw)
    return plan[0]["Plan"]


def nodes(plan: dict) -> Iterator[dict]:
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


def scans_of(sql: str, tables: tuple[str, ...], params=None) -> list[Scan]:
    found = []
    for node in nodes(explain(sql, params)):
        table = node.get("Relation Name")
        if table not in tables:
            continue
        loops = node.get("Actual Loops", 1)
        read = (node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)) * loops
        found.append(Scan(table, node["Node Type"], int(read), sql))
    return found


def reads(run: Callable[[], object], tables: tuple[str, ...]) -> list[Scan]:
    """The scans of `tables` by the SELECTs `run` executes."""
    with CaptureQueriesContext(connection) as captured:
        run()
    found = []
    for query in captured.captured_queries:
        sql = query["sql"]
        if not sql.lstrip(" \n(").upper().startswith(("SELECT", "WITH")):  # (a UNION)
            continue
        if not any(table in sql for table in tables):
            continue
        found += scans_of(sql, tables)
    return found


def fresh(*tables: str) -> None:
    """Empty these tables (and those referring to them) as a fresh install holds them, inside
    the test's transaction: what earlier tests of a long run deleted from them (dead rows,
    pages) would otherwise weigh on the plan this test checks."""
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(tables)} CASCADE")


def analyze(*tables: str, vacuum: bool = False) -> None:
    """Refresh the planner's statistics, as autovacuum would; with vacuum (outside a
    transaction only), also the visibility map that index-only scans rely on."""
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"{'VACUUM ' if vacuum else ''}ANALYZE {table}")


def assert_bounded(scans: list[Scan], *, max_rows: int) -> None:
    """No table read whole, and no scan reading more than max_rows rows."""
    whole = [s for s in scans if s.node == "Seq Scan"]
    assert not whole, "Sequential scans:\n" + "\n".join(f"{s.table}: {s.sql}" for s in whole)
    big = [s for s in scans if s.rows > max_rows]
    assert not big, "Scans reading too much:\n" + "\n".join(
        f"{s.table} {s.node} {s.rows} rows: {s.sql}" for s in big
    )


def crowd(*, organizations: int, posts: int, now, history: int = 2) -> None:
    """`organizations` idle tenants beside the test's own: each with one account and
    `posts` scheduled posts over the next year (each with its pending publish job), and
    `history` times as many published ones over the past year (jobs done)."""
    from datetime import timedelta

    from loadtest.bench_pages import fill
    from tests.factories import SocialAccountFactory, WorkspaceFactory

    fresh(*BIG_TABLES)
    for _ in range(organizations):
        workspace = WorkspaceFactory()
        account = SocialAccountFactory(workspace=workspace)
        fill(workspace, [account], posts, start=now + timedelta(days=1))
        fill(
            workspace,
            [account],
            posts * history,
            start=now - timedelta(days=365),
            span=timedelta(days=360),
            published=True,
        )


BIG_TABLES = (
    "publications_publication",
    "publications_publicationsegment",
    "renditions_rendition",
    "jobs_job",
)

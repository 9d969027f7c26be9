"""`bench_pages`: what each page and read costs at the size of a hosted workspace.

For each size N (default 1,000 then 50,000) it fills two tenants (the measured one and a
second organization of the same size beside it) to N scheduled publications each, three
destinations apiece, spread over the next year, each destination with its pending
publish job, plus a tenth of N published posts in the past with their finished jobs. The
rows are written with ``bulk_create`` in batches (the publication, its text, its
renditions and their jobs, as the create pipeline would leave them), not through HTTP:
the create path has its own benchmark (``bench_api --bulk``), and filling 300,000 rows
through it would take most of an hour on the 2-core machine. The filled tables are then
ANALYZEd, as autovacuum would soon have done.

Then every page is requested over HTTP through Django's test client (the full middleware
and URL stack, in this process, no network): a few warm-up requests, then ``repeats``
measured ones; each page's p50 is reported. The budgets: every web page ≤ 300 ms,
``/readyz`` ≤ 20 ms, an API list of 50 ≤ 50 ms, at every size.

The data of each size is deleted at the end unless ``keep`` is set.
"""

from __future__ import annotations

import os
import secrets
import statistics
import time as clock
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings

from apps.accounts import services as account_services
from apps.accounts.models import Organization, SocialAccount, User, Workspace
from apps.jobs.models import Job
from apps.planning.services import queue_slots_replace
from apps.publications.models import Publication, PublicationSegment
from apps.publishing.delivery.enqueue import PUBLISH_JOB, publish_dedupe_key
from apps.renditions.models import Rendition
from apps.sandbox.services import sandbox_account_create
from apps.series.models import Series
from apps.series.occurrences import series_materialize
from apps.series.services import series_create
from loadtest.progress import ProgressBar, TextOut

WEB_BUDGET_MS = 300.0
READYZ_BUDGET_MS = 20.0
API_LIST_BUDGET_MS = 50.0
YEAR = timedelta(days=365)
BATCH = 2000  # publications written per round of bulk_create
SLOT_TIMES = ((9, 0), (12, 30), (17, 0))  # the posting slots of each weekday
# Every page measured, in the order of the table (--pages picks some of them).
PAGE_NAMES = (
    "calendar_month",
    "calendar_week",
    "calendar_agenda",
    "queue",
    "queue_slots",
    "series_list",
    "series_page",
    "post_page",
    "posts_list",
    "posts_list_page_2",
    "readyz",
    "api_list_50",
    "metrics",
)


@dataclass
class PagesBenchConfig:
    sizes: tuple[int, ...] = (1000, 50_000)
    destinations: int = 3
    repeats: int = 15
    warmup: int = 3
    keep: bool = False
    pages: tuple[str, ...] = ()  # only these pages (by name); empty: every page
    series: int = 5  # recurring series in the measured workspace


@dataclass(frozen=True)
class Measure:
    p50_ms: float
    queries: int  # statements of one warm request
    kb: float  # size of its answer


@dataclass
class Tenant:
    owner: User
    workspace: Workspace
    accounts: list[SocialAccount]
    token: str


def make_tenant(tag: str, destinations: int) -> Tenant:
    """An organization with one workspace, its owner, sandbox accounts and an API token."""
    owner = account_services.user_get_or_create(email=f"{tag}@bench.invalid")
    org = account_services.organization_create(name=tag, slug=f"{tag}-org", owner=owner)
    Organization.objects.filter(pk=org.pk).update(monthly_post_quota=10_000_000)
    workspace = account_services.workspace_create(organization=org, name=tag, slug=f"{tag}-ws")
    accounts = [
        sandbox_account_create(workspace=workspace, handle=f"{tag}-{i}")
        for i in range(destinations)
    ]
    token = account_services.api_token_create(
        workspace=workspace, name="bench", scopes=["read", "write", "publish"]
    )
    return Tenant(owner, workspace, accounts, token.clear)


def seed_pages(tenant: Tenant, series: int) -> None:
    """What the queue, slots and series pages show besides the filled posts: the
    workspace's posting slots (three a weekday), and `series` recurring series posting
    daily to every destination, each with its next 60 days made into publications (as
    the materialize job would have done)."""
    queue_slots_replace(
        workspace=tenant.workspace,
        account=None,
        slots={(day, time(hour, minute)) for day in range(5) for hour, minute in SLOT_TIMES},
        timezone="",
    )
    for i in range(series):
        made = series_create(
            workspace=tenant.workspace,
            name=f"Series {i + 1}",
            template={
                "segments": [{"text": f"Daily note {i + 1}."}],
                "destinations": [{"account": a.pk} for a in tenant.accounts],
            },
            rrule="FREQ=DAILY",
            dtstart=f"{datetime.now(UTC).date():%Y-%m-%d}T{8 + i % 10:02d}:30",
            timezone="Europe/Warsaw",
            created_by=tenant.owner,
        )
        series_materialize(series=made)


def _insert_select(model, supplied: dict[str, tuple[str, list]]) -> tuple[str, str, list]:
    """The column list and SELECT list of an ``INSERT INTO model SELECT ...``: the
    `supplied` columns (an SQL expression and its parameters each), and every other
    column with what Django would write (its default; now() for auto_now times), or
    left to the database default it declares."""
    columns, expressions, params = [], [], []
    for f in model._meta.concrete_fields:
        if f.primary_key:
            continue
        if f.column in supplied:
            sql, values = supplied[f.column]
        elif f.has_db_default():
            continue
        elif getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            sql, values = "now()", []
        else:
            sql, values = "%s", [f.get_db_prep_save(f.get_default(), connection)]
        columns.append(connection.ops.quote_name(f.column))
        expressions.append(sql)
        params += values
    return ", ".join(columns), ", ".join(expressions), params


def fill(
    workspace: Workspace,
    accounts: list[SocialAccount],
    count: int,
    *,
    start: datetime,
    span: timedelta = YEAR,
    published: bool = False,
    on_batch: Callable[[int], None] | None = None,
    batch: int = BATCH,
) -> None:
    """`count` publications spread evenly over [start, start + span), one destination per
    account, each destination with its publish job: scheduled and pending (the default),
    or published with the job done (history). Written by INSERT ... SELECT statements
    (two a batch, each batch in its own transaction), with the columns Django's models
    declare and their defaults; the database's triggers fill what they keep."""
    step = span / max(count, 1)
    pub_status = Publication.Status.PUBLISHED if published else Publication.Status.SCHEDULED
    r_status = Rendition.Status.PUBLISHED if published else Rendition.Status.SCHEDULED
    j_status = Job.Status.DONE if published else Job.Status.PENDING
    p_cols, p_select, p_params = _insert_select(
        Publication,
        {
            "workspace_id": ("%s", [workspace.pk]),
            "status": ("%s", [pub_status]),
            "scheduled_at": ("%s::timestamptz + g * %s::interval", [start, step]),
        },
    )
    s_cols, s_select, s_params = _insert_select(
        PublicationSegment,
        {
            "publication_id": ("p.id", []),
            "position": ("0", []),
            "text": ("'Post ' || p.id || ': what we have planned.'", []),
        },
    )
    r_cols, r_select, r_params = _insert_select(
        Rendition,
        {
            "publication_id": ("p.id", []),
            "workspace_id": ("p.workspace_id", []),
            "social_account_id": ("a.id", []),
            "platform": ("a.platform", []),
            "status": ("%s", [r_status]),
            "published_at": ("CASE WHEN %s THEN p.scheduled_at END", [published]),
            "provider_post_id": (
                "CASE WHEN %s THEN 'post-' || p.id || '-' || a.id ELSE '' END",
                [published],
            ),
            "attempts": ("%s", [1 if published else 0]),
        },
    )
    j_cols, j_select, j_params = _insert_select(
        Job,
        {
            "organization_id": ("%s", [workspace.organization_id]),
            "workspace_id": ("%s", [workspace.pk]),
            "type": ("%s", [PUBLISH_JOB]),
            "payload": ("jsonb_build_object('rendition_id', r.id)", []),
            "status": ("%s", [j_status]),
            "run_at": ("r.effective_at", []),
            "attempts": ("%s", [1 if published else 0]),
            "dedupe_key": ("%s || r.id", [publish_dedupe_key(0)[:-1]]),
            "started_at": ("CASE WHEN %s THEN r.effective_at END", [published]),
            "finished_at": (
                "CASE WHEN %s THEN r.effective_at + interval '2 seconds' END",
                [published],
            ),
        },
    )
    publications_sql = f"""
        WITH p AS (
            INSERT INTO publications_publication ({p_cols})
            SELECT {p_select} FROM generate_series(%s, %s) AS g RETURNING id
        )
        INSERT INTO publications_publicationsegment ({s_cols})
        SELECT {s_select} FROM p RETURNING publication_id
    """  # noqa: S608 - column names from the models
    renditions_sql = f"""
        WITH r AS (
            INSERT INTO renditions_rendition ({r_cols})
            SELECT {r_select}
              FROM publications_publication p
             CROSS JOIN unnest(%s::bigint[], %s::text[]) AS a(id, platform)
             WHERE p.id = ANY(%s::bigint[])
            RETURNING id, effective_at
        )
        INSERT INTO jobs_job ({j_cols}) SELECT {j_select} FROM r
    """  # noqa: S608 - column names from the models
    account_ids = [a.pk for a in accounts]
    platforms = [a.platform for a in accounts]
    for first in range(0, count, batch):
        n = min(batch, count - first)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(publications_sql, [*p_params, first, first + n - 1, *s_params])
            ids = [row[0] for row in cursor.fetchall()]
            cursor.execute(renditions_sql, [*r_params, account_ids, platforms, ids, *j_params])
        if on_batch is not None:
            on_batch(n)


def analyze() -> None:
    """Refresh the planner's statistics of the filled tables."""
    with connection.cursor() as cursor:
        for table in (
            "publications_publication",
            "publications_publicationsegment",
            "renditions_rendition",
            "jobs_job",
        ):
            cursor.execute(f"ANALYZE {table}")


@dataclass
class PagesBench:
    config: PagesBenchConfig
    progress: TextOut
    tag: str = field(default_factory=lambda: f"bench-pages-{secrets.token_hex(3)}")

    def run(self) -> dict:
        results: dict[str, dict[str, float]] = {}
        queries: dict[str, dict[str, int]] = {}
        sizes_kb: dict[str, dict[str, float]] = {}
        for size in self.config.sizes:
            measured = self._run_size(size)
            results[str(size)] = {name: m.p50_ms for name, m in measured.items()}
            queries[str(size)] = {name: m.queries for name, m in measured.items()}
            sizes_kb[str(size)] = {name: m.kb for name, m in measured.items()}
        return {
            "sizes": list(self.config.sizes),
            "p50_ms": results,
            "queries": queries,
            "kb": sizes_kb,
            "budgets_ms": {
                "web": WEB_BUDGET_MS,
                "readyz": READYZ_BUDGET_MS,
                "api_list": API_LIST_BUDGET_MS,
            },
            "within_budget": all(
                ok for by_page in results.values() for ok in _verdicts(by_page).values()
            ),
            "loadavg": [round(x, 2) for x in os.getloadavg()],
        }

    def _run_size(self, size: int) -> dict[str, Measure]:
        tag = f"{self.tag}-{size}"
        measured = make_tenant(tag, self.config.destinations)
        other = make_tenant(f"{tag}-beside", self.config.destinations)
        try:
            now = datetime.now(UTC)
            history = size // 10
            total = 2 * (size + history)
            bar = ProgressBar(self.progress, f"fill {size:,}", total)
            done = 0

            def advanced(n: int) -> None:
                nonlocal done
                done += n
                bar.update(done)

            for tenant in (measured, other):
                # From an hour from now, so nothing falls due while the bench runs.
                fill(
                    tenant.workspace,
                    tenant.accounts,
                    size,
                    start=now + timedelta(hours=1),
                    on_batch=advanced,
                )
                fill(
                    tenant.workspace,
                    tenant.accounts,
                    history,
                    start=now - YEAR,
                    span=YEAR - timedelta(days=1),
                    published=True,
                    on_batch=advanced,
                )
            bar.close()
            seed_pages(measured, self.config.series)
            analyze()
            return self._measure(measured, now)
        finally:
            if not self.config.keep:
                self._cleanup(tag)

    def _measure(self, tenant: Tenant, now: datetime) -> dict[str, Measure]:
        slug = tenant.workspace.slug
        # The busiest month and week are any of the year: every day holds the same.
        month = (now + timedelta(days=40)).date().isoformat()
        posts_list = f"/w/{slug}/posts/"
        series = Series.objects.filter(workspace=tenant.workspace).order_by("pk").first()
        post = (
            Publication.objects.filter(
                workspace=tenant.workspace, series_occurrences__isnull=True, scheduled_at__gt=now
            )
            .order_by("scheduled_at", "pk")
            .first()
        )
        pages: dict[str, str | None] = {
            "calendar_month": f"/w/{slug}/calendar/?view=month&date={month}",
            "calendar_week": f"/w/{slug}/calendar/?view=week&date={month}",
            "calendar_agenda": f"/w/{slug}/calendar/?view=agenda&date={month}",
            "queue": f"/w/{slug}/queue/",
            "queue_slots": f"/w/{slug}/queue/slots/",
            "series_list": f"/w/{slug}/series/",
            "series_page": f"/w/{slug}/series/{series.pk}/" if series else None,
            "post_page": f"/w/{slug}/posts/{post.pk}/" if post else None,
            "posts_list": posts_list,
            "posts_list_page_2": None,  # the next page, from the first page's link
            "readyz": "/readyz",
            "api_list_50": "/api/v1/publications?limit=50",
            "metrics": "/metrics",
        }
        assert tuple(pages) == PAGE_NAMES
        web = Client()
        web.force_login(tenant.owner)
        api = Client(headers={"Authorization": f"Bearer {tenant.token}"})
        measured: dict[str, Measure] = {}
        with override_settings(API_THROTTLE_RATE=None, ALLOWED_HOSTS=["*"]):
            first_list = web.get(posts_list, secure=True).content.decode()
            after = _next_cursor(first_list)
            pages["posts_list_page_2"] = f"/w/{slug}/posts/?after={after}" if after else None
            for name, url in pages.items():
                if url is None or (self.config.pages and name not in self.config.pages):
                    continue
                client = api if name.startswith("api_") else web
                extra = {"REMOTE_ADDR": "127.0.0.1"} if name == "metrics" else {}
                measured[name] = self._p50(client, url, **extra)
        return measured

    def _p50(self, client: Client, url: str, **extra) -> Measure:
        """The median time of the measured requests, with the statements and the size of
        the last one."""
        timings = []
        for i in range(self.config.warmup + self.config.repeats):
            with CaptureQueriesContext(connection) as statements:
                started = clock.perf_counter()
                response = client.get(url, secure=True, **extra)
                took = (clock.perf_counter() - started) * 1000
            if response.status_code != 200:
                raise RuntimeError(f"{url} answered {response.status_code}")
            if i >= self.config.warmup:
                timings.append(took)
        return Measure(
            p50_ms=round(statistics.median(timings), 1),
            queries=len(statements),
            kb=round(len(response.content) / 1024, 1),
        )

    def _cleanup(self, tag: str) -> None:
        """The series go first, then the filled rows by SQL (Django's cascade would read
        every one of them back first), then the tenants themselves through the ORM."""
        orgs = list(Organization.objects.filter(slug__startswith=tag).values_list("pk", flat=True))
        workspaces = list(
            Workspace.objects.filter(organization__in=orgs).values_list("pk", flat=True)
        )
        Series.objects.filter(workspace__in=workspaces).delete()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM jobs_job WHERE organization_id = ANY(%s)", [orgs])
            cursor.execute(
                """DELETE FROM renditions_renditionsegment s
                    USING renditions_rendition r
                    WHERE s.rendition_id = r.id AND r.workspace_id = ANY(%s)""",
                [workspaces],
            )
            cursor.execute(
                "DELETE FROM renditions_rendition WHERE workspace_id = ANY(%s)", [workspaces]
            )
            cursor.execute(
                """DELETE FROM publications_publicationsegment s
                    USING publications_publication p
                    WHERE s.publication_id = p.id AND p.workspace_id = ANY(%s)""",
                [workspaces],
            )
            cursor.execute(
                "DELETE FROM publications_publication WHERE workspace_id = ANY(%s)", [workspaces]
            )
        for org in Organization.objects.filter(pk__in=orgs):
            org.delete()
        get_user_model().objects.filter(email__startswith=tag).delete()


def _next_cursor(page: str) -> str | None:
    marker = "after="
    at = page.find(marker)
    if at < 0:
        return None
    end = page.find('"', at)
    return page[at + len(marker) : end]


def _verdicts(p50: dict[str, float]) -> dict[str, bool]:
    verdicts = {}
    for name, ms in p50.items():
        if name == "readyz":
            budget = READYZ_BUDGET_MS
        elif name.startswith("api_"):
            budget = API_LIST_BUDGET_MS
        else:
            budget = WEB_BUDGET_MS
        verdicts[name] = ms <= budget
    return verdicts


def table(result: dict) -> str:
    """The p50 of each page at each size, with its budget and verdict, then the statements
    and the size of one request at the last size, as text."""
    sizes = [str(s) for s in result["sizes"]]
    last = sizes[-1]
    names = list(result["p50_ms"][sizes[0]])
    lines = [
        f"{'page':<20}"
        + "".join(f"{s + ' posts':>14}" for s in sizes)
        + "  budget  ok  queries      KB"
    ]
    for name in names:
        row = [result["p50_ms"][s].get(name) for s in sizes]
        budget = (
            READYZ_BUDGET_MS
            if name == "readyz"
            else API_LIST_BUDGET_MS
            if name.startswith("api_")
            else WEB_BUDGET_MS
        )
        ok = all(v is not None and v <= budget for v in row)
        cells = "".join(f"{v:>11.1f} ms" if v is not None else f"{'-':>14}" for v in row)
        queries = result["queries"][last].get(name, 0)
        kb = result["kb"][last].get(name, 0.0)
        lines.append(
            f"{name:<20}{cells}  {budget:>6.0f}  {'yes' if ok else 'NO ':<3}"
            f" {queries:>8} {kb:>7.1f}"
        )
    return "\n".join(lines)

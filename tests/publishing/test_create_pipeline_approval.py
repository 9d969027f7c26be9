"""Every way a publication is created goes through the one create pipeline, so the approval
rule holds on all of them: with the workspace's rule on, an editor schedules nothing
through the API (single and bulk), the web composer (schedule and "Add to queue"), the CSV
import, the MCP create tool or a series they started; each is refused APPROVAL_REQUIRED
(drafts still go through). An admin doing the same schedules on every path, so each step
below does reach the pipeline."""

from datetime import time, timedelta
from types import SimpleNamespace

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from apps.accounts.services import api_token_create
from apps.api.mcp import tools
from apps.approvals.models import ApprovalRule
from apps.jobs.models import Job
from apps.planning.services import queue_slots_replace
from apps.publications.models import Publication
from apps.renditions.models import Rendition
from apps.series.models import SeriesOccurrence
from apps.series.occurrences import series_materialize
from apps.series.services import series_create
from tests.api.helpers import bearer
from tests.factories import SocialAccountFactory

pytestmark = pytest.mark.django_db

SCHEDULED = Publication.Status.SCHEDULED
IMPORT = "/w/ws-a/posts/import/"
COMPOSE = "/w/ws-a/compose/"


@pytest.fixture(autouse=True)
def _in_process(monkeypatch, settings, tmp_path):
    # Tools close stale connections like Django's request signals do; in a test
    # transaction that would close the test's own connection.
    monkeypatch.setattr(tools, "close_old_connections", lambda: None)
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def news(workspace_a):
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="news")


def _later(hours: float = 3) -> str:
    return (timezone.now() + timedelta(hours=hours)).isoformat()


def _scheduled() -> int:
    """Publications, renditions and publish jobs that would go out without a review."""
    publications = Publication.objects.filter(status=SCHEDULED).count()
    renditions = Rendition.objects.filter(status=Rendition.Status.SCHEDULED).count()
    jobs = Job.objects.filter(type="renditions.publish").count()
    assert publications <= renditions == jobs
    return renditions


def _upload_csv(person, news) -> tuple[Client, str]:
    """A CSV import of one scheduled row, uploaded (while the rule is off) and not run."""
    client = Client()
    client.force_login(person)
    text = f"text,scheduled_at,destinations\nFrom a file,{_later()},news\n"
    upload = SimpleUploadedFile("posts.csv", text.encode(), content_type="text/csv")
    response = client.post(IMPORT, {"file": upload, "schedule": "on"})
    assert response.status_code == 302, response.content[:500]
    return client, response["Location"].rstrip("/").split("/")[-1]


def _run_csv(client: Client, ident: str) -> None:
    response = client.post(f"{IMPORT}{ident}/run/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "HX-Redirect" in response


def _series(workspace, person, news):
    """A daily series started by person (while the rule is off), its first occurrences
    not materialized yet."""
    start = (timezone.now() + timedelta(days=1)).replace(microsecond=0, tzinfo=None)
    series = series_create(
        workspace=workspace,
        name="Daily",
        template={"segments": [{"text": "Daily"}], "destinations": [{"account": news.pk}]},
        rrule="FREQ=DAILY",
        count=2,
        dtstart=start.isoformat(),
        timezone="UTC",
        created_by=person,
    )
    Publication.objects.filter(reference_key__startswith=f"series-{series.pk}-").delete()
    SeriesOccurrence.objects.filter(series=series).delete()
    series.materialized_through = None
    series.save(update_fields=["materialized_through"])
    return series


def _walk(person, workspace, news) -> list[tuple[str, object]]:
    """Create one scheduled post through every entry point as person, with the approval
    rule on; each step's answer, by entry point."""
    client, ident = _upload_csv(person, news)
    series = _series(workspace, person, news)
    queue_slots_replace(
        workspace=workspace, slots=[(day, time(9)) for day in range(7)], timezone="UTC"
    )
    ApprovalRule.objects.create(workspace=workspace, required=True)
    token = api_token_create(
        workspace=workspace,
        name="walk",
        scopes=["read", "write", "publish"],
        created_by=person,
    )
    api = bearer(token.clear)
    one = {"text": "Hi", "destinations": [{"account": news.pk}], "scheduled_at": _later()}
    browser = Client()
    browser.force_login(person)
    composed = {"segment_count": "1", "segment-0-text": "Composed", "destinations": [news.pk]}
    mcp_context = SimpleNamespace(
        request_context=SimpleNamespace(
            request=SimpleNamespace(state=SimpleNamespace(api_token=token.token))
        )
    )

    answers: list[tuple[str, object]] = []
    answers.append(
        ("api single", api.post("/api/v1/publications", {**one, "status": SCHEDULED}, "json"))
    )
    bulk = api.post(
        "/api/v1/publications/bulk",
        {"items": [{**one, "status": SCHEDULED}, {**one, "text": "A draft"}]},
        format="json",
    )
    answers.append(("api bulk", bulk))
    answers.append(("composer", browser.post(COMPOSE, {**composed, "op": "publish_now"})))
    answers.append(("add to queue", browser.post(COMPOSE, {**composed, "op": "add_to_queue"})))
    _run_csv(client, ident)
    answers.append(("csv import", client.get(f"{IMPORT}{ident}/")))
    answers.append(
        (
            "mcp",
            tools.create_publication(
                mcp_context, text="Hi", destinations=[{"account": news.pk}], status=SCHEDULED
            ),
        )
    )
    answers.append(("series", series_materialize(series=series)))
    return answers


def test_an_editor_schedules_nothing_on_any_path_while_approval_is_required(bob, workspace_a, news):
    answers = dict(_walk(bob, workspace_a, news))

    assert _scheduled() == 0
    single = answers["api single"]
    assert single.status_code == 403 and single.json()["error"]["code"] == "APPROVAL_REQUIRED"
    bulk = answers["api bulk"].json()
    assert [item["status"] for item in bulk["items"]] == ["error", "created"]
    assert bulk["items"][0]["error"]["code"] == "APPROVAL_REQUIRED"
    assert bulk["items"][1]["publication"]["status"] == "draft"  # drafts still go through
    for page in ("composer", "add to queue"):
        assert answers[page].status_code in (400, 403), page
        assert "approval" in answers[page].content.decode(), page
    report = answers["csv import"].content.decode()
    assert "0 created, 0 already there, 1 with errors" in report
    assert "needs an admin&#x27;s approval" in report
    assert answers["mcp"].is_error
    assert answers["mcp"].structured_content["error"]["code"] == "APPROVAL_REQUIRED"
    assert answers["series"].created == []
    refused = SeriesOccurrence.objects.filter(status=SeriesOccurrence.Status.FAILED)
    assert [row.error["code"] for row in refused] == ["APPROVAL_REQUIRED"] * 2
    # Only the bulk request's draft was written.
    assert list(Publication.objects.values_list("status", flat=True)) == ["draft"]


def test_an_admin_schedules_through_every_path(alice, workspace_a, news):
    answers = dict(_walk(alice, workspace_a, news))

    assert answers["api single"].status_code == 201
    assert answers["api bulk"].json()["created"] == 2
    assert answers["composer"].status_code == 302
    assert answers["add to queue"].status_code == 302
    assert not answers["mcp"].is_error
    assert len(answers["series"].created) == 2
    # single, bulk, composer, queue, CSV, MCP, two occurrences of the series
    assert _scheduled() == 8


def test_the_import_form_tells_an_editor_to_import_drafts_while_approval_is_required(
    bob, alice, workspace_a, news
):
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    text = f"text,scheduled_at,destinations\nFrom a file,{_later()},news\n"
    answers = {}
    for person in (bob, alice):
        client = Client()
        client.force_login(person)
        upload = SimpleUploadedFile("posts.csv", text.encode(), content_type="text/csv")
        answers[person.email] = client.post(IMPORT, {"file": upload, "schedule": "on"})

    refused = answers[bob.email]
    assert refused.status_code == 400
    assert "import them as drafts and submit them for review" in refused.content.decode()
    assert answers[alice.email].status_code == 302  # an approver schedules directly

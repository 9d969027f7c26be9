"""Each command against the live server: what it prints, what it changed, its exit code."""

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from django.utils import timezone

from apps.publications.models import MediaAsset, Publication
from apps.renditions.models import Rendition, normalize_error
from tests.api.helpers import png_bytes
from tests.factories import PublicationFactory, RenditionFactory, RenditionSegmentFactory


def later(hours: int = 2) -> str:
    return (timezone.now() + timedelta(hours=hours)).isoformat()


def test_login_stores_the_token_readable_by_its_owner_only(cli, site, token_a, tmp_path):
    result = cli("login", "--url", site, "--token", token_a, token=None)

    assert result.code == 0, result.err
    assert "Workspace A" in result.out
    path = tmp_path / "config" / "socialpost" / "config.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert json.loads(path.read_text()) == {"url": site, "token": token_a}

    whoami = cli("whoami", token=None)  # from the stored file, no environment
    assert whoami.code == 0, whoami.err
    assert "ws-a" in whoami.out and "publish" in whoami.out

    assert cli("logout", token=None).code == 0
    assert not path.exists()
    after = cli("whoami", token=None)
    assert after.code == 3
    assert "NOT_LOGGED_IN" in after.err


def test_login_with_a_bad_token_exits_3_and_stores_nothing(cli, site, tmp_path):
    result = cli("login", "--url", site, "--token", "sp_not-a-real-token", token=None)

    assert result.code == 3
    assert "INVALID_TOKEN" in result.err
    assert not (tmp_path / "config" / "socialpost" / "config.json").exists()


def test_accounts_lists_the_workspace_accounts(cli, sandy, sandra, account_b):
    table = cli("accounts")
    as_json = cli("accounts", "--json")

    assert table.code == 0, table.err
    assert table.out.splitlines()[0].split() == ["ID", "PLATFORM", "HANDLE", "STATUS", "NAME"]
    assert "@sandy" in table.out and "@sandra" in table.out
    assert "outsider" not in table.out
    handles = {a["handle"] for a in json.loads(as_json.out)["results"]}
    assert handles == {"sandy", "sandra"}


def test_schedule_uploads_media_and_posts_to_two_destinations(cli, sandy, sandra, tmp_path):
    image = tmp_path / "square.png"
    image.write_bytes(png_bytes())
    at = later()

    result = cli(
        "schedule",
        "Hello from the terminal",
        "--to",
        "@sandy",
        "--to",
        "sandbox:SANDRA",
        "--media",
        str(image),
        "--alt",
        "A red square",
        "--at",
        at,
        "--json",
    )

    assert result.code == 0, result.err
    body = json.loads(result.out)
    assert body["status"] == "scheduled"
    assert {r["account_handle"] for r in body["renditions"]} == {"sandy", "sandra"}
    publication = Publication.objects.get(pk=body["id"])
    assert publication.scheduled_at == timezone.datetime.fromisoformat(at)
    (segment,) = publication.segments.all()
    assert segment.text == "Hello from the terminal"
    (asset,) = MediaAsset.objects.all()
    assert asset.alt_text == "A red square"
    assert [link.media_id for link in segment.media_links.all()] == [asset.pk]

    shown = cli("show", str(body["id"]))
    assert shown.code == 0, shown.err
    assert f"Publication {body['id']}: scheduled" in shown.out
    lines = shown.out.splitlines()
    header = next(line for line in lines if line.startswith("RENDITION"))
    assert header.split() == [
        "RENDITION",
        "DESTINATION",
        "PLATFORM",
        "STATUS",
        "ATTEMPTS",
        "WHEN",
        "ERROR",
        "ACTION",
        "URL",
    ]
    assert sum(1 for line in lines if "@sandy " in line or "@sandra " in line) == 2


def test_compose_reads_a_thread_from_stdin(cli, sandy):
    result = cli("compose", "-", "--thread", "--to", "@sandy", "--json", stdin="One\n---\nTwo\n\n")

    assert result.code == 0, result.err
    publication = Publication.objects.get(pk=json.loads(result.out)["id"])
    assert publication.status == "draft"
    assert [s.text for s in publication.segments.order_by("position")] == ["One", "Two"]


def test_validate_prints_every_problem_and_exits_6(cli, sandy, sandra):
    result = cli("validate", "x" * 501, "--to", "@sandy", "--to", "@sandra")

    assert result.code == 6
    assert "2 problems" in result.out
    assert "destinations.0.segments.0.text" in result.out
    assert "destinations.1.segments.0.text" in result.out
    assert result.out.count("TEXT_TOO_LONG") == 2
    assert not Publication.objects.exists()

    fine = cli("validate", "Short", "--to", "@sandy", "--json")
    assert fine.code == 0
    assert json.loads(fine.out) == {"valid": True, "problems": []}


def test_list_filters_by_status(cli, workspace_a):
    PublicationFactory(workspace=workspace_a, status="failed")
    draft = PublicationFactory(workspace=workspace_a, status="draft")

    result = cli("list", "--status", "draft", "--json")

    assert result.code == 0, result.err
    assert [p["id"] for p in json.loads(result.out)["results"]] == [draft.pk]


def test_retry_sends_failed_destinations_again(cli, workspace_a, sandy):
    publication = PublicationFactory(workspace=workspace_a, status="failed")
    failed = RenditionFactory(
        publication=publication,
        social_account=sandy,
        status="failed",
        last_error=normalize_error(
            {"kind": "content_rejected", "message": "No.", "action": "edit_content"}
        ),
    )
    shown = cli("show", str(publication.pk))
    assert "content_rejected" in shown.out and "edit_content" in shown.out

    result = cli("retry", str(publication.pk))

    assert result.code == 0, result.err
    assert "scheduled" in result.out
    failed.refresh_from_db()
    assert failed.status == "scheduled"
    assert failed.manual_retry_count == 1


def test_cancel_cancels_what_has_not_gone_out(cli, sandy):
    created = cli("schedule", "Soon", "--to", "@sandy", "--at", later(), "--json")
    publication_id = json.loads(created.out)["id"]

    result = cli("cancel", str(publication_id), "--json")

    assert result.code == 0, result.err
    assert json.loads(result.out)["status"] == "cancelled"
    assert Rendition.objects.get(publication_id=publication_id).status == "cancelled"


def test_resolve_records_the_post_of_an_ambiguous_destination(cli, workspace_a, sandy):
    publication = PublicationFactory(workspace=workspace_a, status="failed")
    rendition = RenditionFactory(
        publication=publication,
        social_account=sandy,
        status="failed",
        ambiguous=True,
        attempts=1,
        last_error=normalize_error({"kind": "timeout_after_send", "message": "No answer."}),
    )
    RenditionSegmentFactory(rendition=rendition)

    result = cli("resolve", str(rendition.pk), "--published", "https://sandbox.example/p/9")

    assert result.code == 0, result.err
    assert "published" in result.out
    rendition.refresh_from_db()
    assert rendition.status == "published"
    assert rendition.provider_url == "https://sandbox.example/p/9"


def test_the_package_installs_the_socialpost_console_script():
    script = Path(sys.executable).parent / "socialpost"

    result = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=30)

    assert result.returncode == 0
    assert result.stdout.startswith("socialpost ")

"""Importing posts from a CSV file: upload, a preview of the first rows with their problems,
then the import in batches of 500 through the bulk service (the create pipeline: every
rule of a single create, approval included, holds for each row), with a progress bar, and
a per-row report.

The browser drives the batches: each batch answers a progress fragment that asks for the
next one (htmx), or, without JavaScript, a page with a button to continue. Which batch
runs is decided here, never by the request, under the organization's row lock (the lock
the bulk service takes), so two requests for one import never run a batch twice.
"""

from __future__ import annotations

import zoneinfo
from datetime import datetime

from django import forms
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from apps.accounts.permissions import Action
from apps.approvals.rule import needs_approval
from apps.common.errors import DomainError
from apps.publications.models import PublicationSegment
from apps.publishing import quotas
from apps.publishing.services.bulk import publications_bulk_create
from apps.publishing.services.create_pipeline import OutcomeStatus
from apps.web import csv_import
from apps.web.access import WorkspaceRequest, is_htmx, permits, require, workspace_view

PREVIEW_ROWS = 20

# The CSV columns a problem's field path stands for, as the file's author knows them: the
# create pipeline names its own fields (``segments.0.text``, ``local_time``).
_COLUMN_LABELS = {
    "segments": "Text",
    "text": "Text",
    "scheduled_at": "Time (scheduled_at)",
    "local_time": "Time (scheduled_at)",
    "timezone": "Time (scheduled_at)",
    "destinations": "Destinations",
    "reference_key": "Reference key",
}


class ImportForm(forms.Form):
    file = forms.FileField(
        label="CSV file",
        help_text="Columns: text, scheduled_at (ISO, or a time in your zone), destinations "
        "(handles or ids separated by ;) and optionally reference_key. Up to 40,000 rows.",
    )
    schedule = forms.BooleanField(
        label="Schedule the posts at their times",
        required=False,
        initial=True,
        help_text="Unticked, every row becomes a draft.",
    )


def _outcome_row(number: int, outcome_status: str, publication_id: int | None, error: dict | None):
    return {"row": number, "status": outcome_status, "publication": publication_id, "error": error}


def _error_dict(exc: DomainError) -> dict:
    return {"code": exc.code, "message": exc.message, "details": exc.details}


def _problems(error: dict | None) -> list[tuple[str, str]]:
    """A row's problems as (column, messages) pairs, one pair per column, in the words of
    the file rather than the API's field paths."""
    if not error:
        return []
    merged: dict[str, list[str]] = {}
    for path, messages in (error.get("details") or {}).items():
        head = str(path).split(".")[0]
        label = _COLUMN_LABELS.get(head, head.replace("_", " ").capitalize())
        listed = messages if isinstance(messages, list) else [messages]
        merged.setdefault(label, []).extend(
            m for m in map(str, listed) if m not in merged.get(label, [])
        )
    return [(label, " ".join(messages)) for label, messages in merged.items()]


def _when(item: dict, zone: str) -> datetime | None:
    """The row's time as an instant (shown in the user's zone), or None when it is no time."""
    value = item.get("scheduled_at") or item.get("local_time")
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        try:
            parsed = parsed.replace(tzinfo=zoneinfo.ZoneInfo(item.get("timezone") or zone))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            return None
    return parsed


def _run_items(request: WorkspaceRequest, entries: list[dict]) -> list[dict]:
    """Run one batch through the bulk service; one report row per entry, in order."""
    ready = [entry for entry in entries if "item" in entry]
    outcomes = publications_bulk_create(
        workspace=request.workspace,
        author=request.user,
        items=[entry["item"] for entry in ready],
    )
    by_row = {entry["row"]: outcome for entry, outcome in zip(ready, outcomes, strict=True)}
    rows = []
    for entry in entries:
        if "error" in entry:
            rows.append(_outcome_row(entry["row"], OutcomeStatus.ERROR, None, entry["error"]))
            continue
        outcome = by_row[entry["row"]]
        rows.append(
            _outcome_row(
                entry["row"],
                outcome.status,
                outcome.publication.pk if outcome.publication is not None else None,
                _error_dict(outcome.error) if outcome.error is not None else None,
            )
        )
    return rows


def _preview(request: WorkspaceRequest, state: csv_import.ImportState) -> list[dict]:
    """What the first rows would do, checked by the bulk service in a transaction that is
    rolled back: nothing is created."""
    entries = state.items[:PREVIEW_ROWS]
    with transaction.atomic():
        rows = _run_items(request, entries)
        transaction.set_rollback(True)
    zone = request.user.display_timezone
    for row, entry in zip(rows, entries, strict=True):
        item = entry.get("item", {})
        row["text"] = item.get("text", entry.get("text", ""))
        row["when"] = _when(item, zone)
        row["when_raw"] = item.get("scheduled_at") or item.get("local_time") or ""
        row["problems"] = _problems(row["error"])
        row["publication"] = row["publication"] if row["status"] == OutcomeStatus.EXISTS else None
    return rows


def _with_post_texts(request: WorkspaceRequest, report: list[dict]) -> list[dict]:
    """Each report row with its problems in words and its post named by its first text
    (a number says nothing to the person who wrote the file)."""
    ids = {row["publication"] for row in report if row.get("publication")}
    texts: dict[int, str] = {}
    if ids:
        segments = PublicationSegment.objects.for_workspace(request.workspace).filter(
            publication_id__in=ids, position=0
        )
        texts = dict(segments.values_list("publication_id", "text"))
    for row in report:
        row["problems"] = _problems(row.get("error"))
        if row.get("publication"):
            row["post_text"] = texts.get(row["publication"], "")
    return report


def _state_or_404(request: WorkspaceRequest, import_id: str) -> csv_import.ImportState:
    state = csv_import.load_state(request.workspace, import_id)
    if state is None or state.user_id != request.user.pk:
        raise Http404("No such import.")
    return state


@workspace_view(Action.EDIT)
@require_http_methods(["GET", "POST"])
def import_upload(request: WorkspaceRequest) -> HttpResponse:
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        schedule = form.cleaned_data["schedule"]
        if schedule and not permits(request, request.workspace, Action.PUBLISH):
            form.add_error("schedule", "Your role may save drafts but not schedule posts.")
        elif schedule and needs_approval(request.workspace, request.user):
            # Told before the file is read; each row is refused anyway (APPROVAL_REQUIRED)
            # by the create pipeline if the rule is turned on while the import runs.
            form.add_error(
                "schedule",
                "Posts in this workspace need an admin's approval before they are scheduled: "
                "import them as drafts and submit them for review.",
            )
        else:
            try:
                rows = csv_import.read_rows(form.cleaned_data["file"])
            except csv_import.ImportFileError as exc:
                form.add_error("file", str(exc))
            else:
                import_id = csv_import.new_import_id()
                state = csv_import.ImportState(
                    import_id=import_id,
                    workspace_id=request.workspace.pk,
                    user_id=request.user.pk,
                    file_name=form.cleaned_data["file"].name[:200],
                    schedule=schedule,
                    items=csv_import.rows_to_items(
                        rows,
                        workspace=request.workspace,
                        zone=request.user.display_timezone,
                        schedule=schedule,
                        import_id=import_id,
                    ),
                )
                csv_import.save_state(state)
                # Each upload clears away the imports nobody touched for a day.
                csv_import.imports_prune()
                return redirect("post-import-detail", request.workspace.slug, import_id)
    context = {"workspace": request.workspace, "section": "posts", "form": form}
    return render(request, "web/imports/upload.html", context, status=400 if form.errors else 200)


def _progress_context(request: WorkspaceRequest, state: csv_import.ImportState) -> dict:
    done = csv_import.batches_done(state)
    rows_done = min(done * csv_import.BATCH_SIZE, len(state.items))
    return {
        "workspace": request.workspace,
        "section": "posts",
        "state": state,
        "done_batches": done,
        "rows_done": rows_done,
        "total": len(state.items),
        "finished": done >= state.batches,
        "run_url": reverse("post-import-run", args=[request.workspace.slug, state.import_id]),
    }


@workspace_view(Action.EDIT)
@require_http_methods(["GET"])
def import_detail(request: WorkspaceRequest, import_id: str) -> HttpResponse:
    """The preview before the import starts, the progress while it runs, the report after."""
    state = _state_or_404(request, import_id)
    context = _progress_context(request, state)
    if context["done_batches"] == 0:
        preview = _preview(request, state)
        # Rows refused when the file was read (any row of the file), and the previewed rows
        # the create pipeline refuses: each row with a problem counts once.
        refused = {entry["row"] for entry in state.items if "error" in entry}
        refused |= {row["row"] for row in preview if row["status"] == OutcomeStatus.ERROR}
        context.update(
            preview=preview,
            problem_rows=len(refused),
            checked_all=len(state.items) <= PREVIEW_ROWS,
            preview_rows=PREVIEW_ROWS,
        )
        return render(request, "web/imports/preview.html", context)
    if not context["finished"]:
        return render(request, "web/imports/progress.html", context)
    report = [row for n in range(state.batches) for row in csv_import.load_result(state, n) or []]
    counts = {
        status: 0 for status in (OutcomeStatus.CREATED, OutcomeStatus.EXISTS, OutcomeStatus.ERROR)
    }
    for row in report:
        counts[row["status"]] += 1
    context.update(report=_with_post_texts(request, report), counts=counts)
    return render(request, "web/imports/report.html", context)


@workspace_view(Action.EDIT)
@require_POST
def import_run(request: WorkspaceRequest, import_id: str) -> HttpResponse:
    """Run the next batch of the import (if any is left) and answer its progress."""
    state = _state_or_404(request, import_id)
    if state.schedule:
        require(request, Action.PUBLISH)
    with transaction.atomic():
        quotas.lock_organization(request.workspace)
        number = csv_import.batches_done(state)
        if number < state.batches:
            rows = _run_items(request, state.batch(number))
            csv_import.save_result(state, number, rows)
    context = _progress_context(request, state)
    detail = reverse("post-import-detail", args=[request.workspace.slug, import_id])
    if not is_htmx(request):
        return redirect(detail)
    if context["finished"]:
        response = HttpResponse()
        response["HX-Redirect"] = detail
        return response
    return render(request, "web/imports/_progress.html", context)

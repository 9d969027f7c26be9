"""The composer: one source text (thread parts, media), destinations with their own tabs
and overrides, live checks per destination, and save / schedule / publish now.

Everything round-trips through the server: structural changes (a part added or removed)
re-render the form (htmx swaps it in place, or a plain POST reloads it); a destination or
override tick re-renders only what depends on the destinations, and a file chosen in a part
only that part's media, so what is typed meanwhile stays; typing asks `composer_check` for
fresh counters and problems.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib import messages
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.accounts.models import SocialAccount, Workspace
from apps.accounts.permissions import Action
from apps.common.errors import Conflict, DomainError, NotFound, QuotaExceeded, ValidationFailed
from apps.publications.models import MediaAsset, Publication
from apps.publications.scheduling import PAST_GRACE, local_to_utc
from apps.publications.services import media_asset_create
from apps.publications.uploads import InsufficientStorage, disk_full_refused, refused_uploads
from apps.renditions.models import Rendition
from apps.web.access import WorkspaceRequest, is_htmx, require, workspace_view
from apps.web.composer.checks import Message, check_draft, problems_from_details
from apps.web.composer.draft import Draft
from apps.web.composer.present import composer_context
from apps.web.composer.submit import (
    ADD_TO_QUEUE,
    PUBLISH_NOW,
    SAVE_DRAFT,
    SCHEDULE,
    SUBMIT_OPS,
    SUBMIT_REVIEW,
    draft_submit,
)
from apps.web.portal_posts import SENT_BACK_TO_CLIENT
from apps.web.views.common import redirect_to

SUCCESS = {
    SAVE_DRAFT: "Draft saved.",
    SCHEDULE: "Scheduled. Each destination's status is below.",
    PUBLISH_NOW: "Publishing now. Each destination's status updates below.",
    ADD_TO_QUEUE: "Added to the queue, at the next slot free for every destination.",
    SUBMIT_REVIEW: "Saved and submitted for review. The workspace's admins were told.",
}


def _accounts(workspace: Workspace) -> list[SocialAccount]:
    return list(SocialAccount.objects.for_workspace(workspace).order_by("platform", "handle"))


def is_editable(publication: Publication) -> bool:
    """True while no destination went out or is in flight (clean failures may change)."""
    # The renditions and their segments the caller read with the publication (the post's
    # page), else loaded here (two queries, left off the publication: it may change next).
    if "renditions" in getattr(publication, "_prefetched_objects_cache", {}):
        renditions = publication.renditions.all()
    else:
        renditions = publication.renditions.prefetch_related("segments")
    return publication.status != Publication.Status.CANCELLED and all(
        r.content_editable_as_read() for r in renditions if r.status != Rendition.Status.CANCELLED
    )


@workspace_view(Action.EDIT)
@require_http_methods(["GET", "POST"])
def compose(request: WorkspaceRequest) -> HttpResponse:
    return _composer(request, publication=None)


@workspace_view(Action.EDIT)
@require_http_methods(["GET", "POST"])
def publication_edit(request: WorkspaceRequest, pk: int) -> HttpResponse:
    publication = get_object_or_404(Publication.objects.for_workspace(request.workspace), pk=pk)
    if not is_editable(publication):
        messages.warning(
            request,
            "This post already went out (or is going out) to some destinations, so it can "
            "no longer be edited. Retry or cancel what is left from its page.",
        )
        return redirect_to(request, _detail_url(request.workspace, publication))
    return _composer(request, publication=publication)


# The ops htmx sends for a destination (or override) tick and for a file chosen in a part.
DESTINATIONS = "destinations"
ATTACH = "attach"


def _op(request: WorkspaceRequest) -> str:
    return request.POST.get("op", "refresh")


def _apply_op(draft: Draft, op: str) -> None:
    name, _, args = op.partition(":")
    numbers = [int(n) for n in args.split(":") if n.isdigit()]
    if name == "add_segment":
        draft.add_segment()
    elif name == "remove_segment" and len(numbers) == 1:
        draft.remove_segment(numbers[0])
    elif name == "remove_media" and len(numbers) == 2:
        draft.remove_media(numbers[0], numbers[1])


def _upload(request: WorkspaceRequest, draft: Draft) -> dict[int, list[str]]:
    """Store the files chosen in each part and attach them; returns errors by part."""
    errors: dict[int, list[str]] = {}
    for i in range(len(draft.segments)):
        for refused in refused_uploads(request, field_name=f"segment-{i}-file"):
            errors.setdefault(i, []).append(f"{refused.file_name}: {refused.message}")
        for upload in request.FILES.getlist(f"segment-{i}-file"):
            try:
                asset = media_asset_create(
                    workspace=request.workspace,
                    file=upload,
                    created_by=request.user,
                    original_name=upload.name or "",
                )
            except (ValidationFailed, QuotaExceeded, InsufficientStorage) as exc:
                # A full disk keeps nothing of the file (and everything typed).
                errors.setdefault(i, []).append(f"{upload.name}: {exc.message}")
            else:
                draft.attach(i, asset)
    return errors


@dataclass
class _Form:
    """The draft to show (again), with what to say about it and the status to answer with."""

    draft: Draft
    errors: list[Message] = field(default_factory=list)
    upload_errors: dict[int, list[str]] = field(default_factory=dict)
    notice: str = ""
    status: int = 200


def _composer(request: WorkspaceRequest, *, publication: Publication | None) -> HttpResponse:
    accounts = _accounts(request.workspace)
    if request.method == "POST":
        form = _posted_form(request, publication=publication, accounts=accounts)
        if isinstance(form, HttpResponse):
            return form
    else:
        form = _initial_form(request, publication=publication)
    return _render_form(request, form, publication=publication, accounts=accounts)


def _posted_form(
    request: WorkspaceRequest, *, publication: Publication | None, accounts: list[SocialAccount]
) -> HttpResponse | _Form:
    """A posted form: its files stored, its op applied, and submitted when the op says so;
    a response when there is nothing to show again (saved, or the form could not be read)."""
    try:
        with disk_full_refused():  # the request's files are written to disk here
            posted = request.POST
    except InsufficientStorage as exc:
        # Nothing of the form could be read: answered without a page, so the browser
        # keeps the form as it is (and says why, see static/js/app.js).
        return HttpResponse(exc.message, status=exc.http_status, headers={"X-Refusal": exc.message})
    draft = Draft.from_post(
        posted,
        workspace=request.workspace,
        accounts=accounts,
        zone=request.user.display_timezone,
    )
    form = _Form(draft=draft, upload_errors=_upload(request, draft))
    op = _op(request)
    _apply_op(draft, op)
    if op in SUBMIT_OPS and not form.upload_errors:
        return _submit(request, form, op=op, publication=publication)
    if form.upload_errors:
        form.status = 400
    return form


def _submit(
    request: WorkspaceRequest, form: _Form, *, op: str, publication: Publication | None
) -> HttpResponse | _Form:
    """Save, schedule or publish the draft: to the post's page when it went through, else
    the form again with why not (a revision conflict keeps what the person wrote)."""
    draft = form.draft
    if op not in (SAVE_DRAFT, SUBMIT_REVIEW):
        require(request, Action.PUBLISH)
    try:
        saved = draft_submit(
            draft=draft,
            op=op,
            workspace=request.workspace,
            user=request.user,
            publication=publication,
        )
    except Conflict as exc:
        form.status = 409
        if exc.code == "REVISION_CONFLICT":
            # Keep everything the person wrote; the next save applies it on top of
            # the current revision, which they have now been told about.
            draft.revision = exc.details.get("current_revision", draft.revision)
            form.notice = (
                "Someone else changed this post while you were editing it. Your "
                "version is still in the form below: review it, then save again to "
                "replace theirs."
            )
        else:
            form.errors = _errors(draft, exc)
    except DomainError as exc:
        form.status = 400 if isinstance(exc, ValidationFailed | NotFound) else exc.http_status
        form.errors = _errors(draft, exc)
    else:
        sent_back = op != SAVE_DRAFT and saved.status == Publication.Status.DRAFT
        messages.success(request, SENT_BACK_TO_CLIENT if sent_back else SUCCESS[op])
        return redirect_to(request, _detail_url(request.workspace, saved))
    return form


def _initial_form(request: WorkspaceRequest, *, publication: Publication | None) -> _Form:
    """The form as first opened: the post being edited, a copy of an earlier one, or a new
    post (at a chosen time, with a library file attached)."""
    zone = request.user.display_timezone
    if publication is not None:
        return _Form(draft=Draft.from_publication(publication, zone=zone))
    if (source := _copy_source(request)) is not None:
        return _Form(
            draft=Draft.copy_of(source, zone=zone),
            notice=(
                "A copy of an earlier post, with each destination's own text. Nothing is saved "
                "until you save or schedule it."
            ),
        )
    draft = Draft.empty(zone=zone, at=request.GET.get("at"))
    _attach_from_library(request, draft)
    return _Form(draft=draft)


def _render_form(
    request: WorkspaceRequest,
    form: _Form,
    *,
    publication: Publication | None,
    accounts: list[SocialAccount],
) -> HttpResponse:
    """The whole page, or for htmx the form or only the fragment an op changed."""
    workspace = request.workspace
    draft = form.draft
    context = composer_context(
        workspace=workspace,
        draft=draft,
        check=check_draft(draft),
        accounts=accounts,
        errors=form.errors,
        upload_errors=form.upload_errors,
    )
    context.update(
        workspace=workspace,
        section="compose",
        publication=publication,
        notice=form.notice,
        form_url=_form_url(workspace, publication),
        check_url=reverse("composer-check", kwargs={"workspace_slug": workspace.slug}),
    )
    template = "web/composer/_form.html" if is_htmx(request) else "web/composer/page.html"
    if is_htmx(request) and request.method == "POST":
        # A destination or override tick, or a file chosen in a part: only what it
        # changes is answered, so nothing typed meanwhile elsewhere in the form is replaced.
        if _op(request) == DESTINATIONS:
            template = "web/composer/_destinations_refresh.html"
        elif _op(request) == ATTACH and (part := _part(request, draft)) is not None:
            template = "web/composer/_upload_refresh.html"
            context["upload_part"] = part
    return render(request, template, context, status=form.status)


def _part(request: WorkspaceRequest, draft: Draft) -> int | None:
    """The part a file was chosen in (``part``), when the draft has it."""
    value = request.POST.get("part", "")
    if value.isdigit() and int(value) < len(draft.segments):
        return int(value)
    return None


def _attach_from_library(request: WorkspaceRequest, draft: Draft) -> None:
    """?media=<id> (the library's "Use in a new post"): start with that file attached, with
    its alt text; an id of another workspace is ignored."""
    media_id = request.GET.get("media", "")
    if not media_id.isdigit() or len(media_id) > 18:
        return
    asset = MediaAsset.objects.for_workspace(request.workspace).filter(pk=media_id).first()
    if asset is not None:
        draft.attach(0, asset)


def _copy_source(request: WorkspaceRequest) -> Publication | None:
    """The post named by ?copy=<id>, from this workspace only (404 otherwise)."""
    value = request.GET.get("copy", "")
    if not value:
        return None
    if not value.isdigit():
        raise Http404("No such post.")
    return get_object_or_404(Publication.objects.for_workspace(request.workspace), pk=int(value))


def _errors(draft: Draft, exc: DomainError) -> list[Message]:
    """The error's field messages, or its message alone when it names no field. A time
    that has passed is told in the person's own zone (the service speaks UTC)."""
    field_messages = [
        (path, texts)
        for path, texts in (exc.details or {}).items()
        if isinstance(texts, list) and all(isinstance(t, str) for t in texts)
    ]
    if not field_messages:
        return [Message(path="", label="", message=exc.message)]
    found = problems_from_details(draft, dict(field_messages))
    passed = _passed_time_message(draft)
    if passed is None:
        return found
    others = [m for m in found if m.path not in ("scheduled_at", "local_time")]
    return [Message("local_time", "Schedule", passed, "schedule-date"), *others]


def _passed_time_message(draft: Draft) -> str | None:
    """What to say when the draft's wall-clock time is further back than the grace."""
    if not draft.has_time or draft.time_error():
        return None
    try:
        zone = zoneinfo.ZoneInfo(draft.zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None
    instant = local_to_utc(datetime.fromisoformat(draft.local_time()), zone)
    if instant >= timezone.now() - PAST_GRACE:
        return None
    return (
        f"{draft.date} at {draft.time} ({draft.zone}) has passed. Pick a later time, "
        "or use Publish now."
    )


def _form_url(workspace: Workspace, publication: Publication | None) -> str:
    if publication is None:
        return reverse("composer", kwargs={"workspace_slug": workspace.slug})
    return reverse(
        "publication-edit", kwargs={"workspace_slug": workspace.slug, "pk": publication.pk}
    )


def _detail_url(workspace: Workspace, publication: Publication) -> str:
    return reverse(
        "publication-detail", kwargs={"workspace_slug": workspace.slug, "pk": publication.pk}
    )


@workspace_view(Action.EDIT, writes=False)
@require_POST
def composer_check(request: WorkspaceRequest) -> HttpResponse:
    """The live check while typing: fresh counters and problems for every destination,
    as out-of-band fragments (the form itself is left alone, so focus and caret stay)."""
    workspace = request.workspace
    draft = Draft.from_post(
        request.POST,
        workspace=workspace,
        accounts=_accounts(workspace),
        zone=request.user.display_timezone,
    )
    context = composer_context(
        workspace=workspace, draft=draft, check=check_draft(draft), accounts=[]
    )
    context["workspace"] = workspace
    return render(request, "web/composer/_checks_oob.html", context)


@workspace_view(Action.VIEW)
@require_GET
def media_file(request: WorkspaceRequest, pk: int) -> FileResponse:
    """A workspace's uploaded file, for previews (members only)."""
    asset = get_object_or_404(MediaAsset.objects.for_workspace(request.workspace), pk=pk)
    response = FileResponse(asset.file.open("rb"), content_type=asset.mime_type)
    response["Cache-Control"] = "private, max-age=3600"
    response["Content-Disposition"] = "inline"
    return response

"""The media library: every upload of the workspace, newest first, searchable, with its
default alt text (editable), where it is used, "use in a new post" and delete for the
unused ones."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import Action
from apps.common.errors import Conflict, DomainError, ValidationFailed
from apps.publications.models import MediaAsset, Publication
from apps.publications.services import media_asset_create
from apps.publications.services.media_library import (
    media_asset_delete,
    media_search,
)
from apps.publications.uploads import InsufficientStorage, disk_full_refused
from apps.publishing.services.media_alt_text import media_alt_text_set
from apps.web.access import WorkspaceRequest, is_htmx, workspace_view
from apps.web.views.common import redirect_to

PAGE_SIZE = 24
KINDS = MediaAsset.Kind.choices


def _library_url(request: WorkspaceRequest) -> str:
    """The library, keeping the search, filter and page the person came from."""
    url = reverse("media-library", kwargs={"workspace_slug": request.workspace.slug})
    kept = {k: request.POST.get(k, "") for k in ("q", "kind", "page")}
    query = urlencode({k: v for k, v in kept.items() if v})
    return f"{url}?{query}" if query else url


def _usage(assets: list[MediaAsset]) -> dict[int, list[Publication]]:
    """The publications using each asset (source or a destination's own media), in three
    queries for the whole page."""
    ids = [a.pk for a in assets]
    pairs = set(
        Publication.objects.filter(segments__media_links__media__in=ids).values_list(
            "segments__media_links__media", "pk"
        )
    ) | set(
        Publication.objects.filter(renditions__segments__media__media__in=ids).values_list(
            "renditions__segments__media__media", "pk"
        )
    )
    publications = Publication.objects.prefetch_related("segments").in_bulk({pk for _, pk in pairs})
    usage: dict[int, list[Publication]] = {pk: [] for pk in ids}
    for media_id, publication_id in sorted(pairs, key=lambda p: -p[1]):
        usage[media_id].append(publications[publication_id])
    return usage


@workspace_view(Action.VIEW)
@require_GET
def media_library(request: WorkspaceRequest) -> HttpResponse:
    return _render_library(request, request.GET)


def _render_library(
    request: WorkspaceRequest, query_from: QueryDict, status: int = 200
) -> HttpResponse:
    q = query_from.get("q", "").strip()[:200]
    kind = query_from.get("kind", "")
    if kind not in MediaAsset.Kind.values:
        kind = ""
    assets = media_search(MediaAsset.objects.for_workspace(request.workspace), q=q, kind=kind)
    page = Paginator(assets, PAGE_SIZE).get_page(query_from.get("page"))
    usage = _usage(list(page.object_list))
    query = urlencode({k: v for k, v in (("q", q), ("kind", kind)) if v})
    context = {
        "workspace": request.workspace,
        "section": "media",
        "page": page,
        "items": [(asset, usage[asset.pk]) for asset in page.object_list],
        "q": q,
        "kind": kind,
        "kinds": KINDS,
        "query": query,
    }
    return render(request, "web/media/library.html", context, status=status)


@workspace_view(Action.EDIT)
@require_POST
def media_upload(request: WorkspaceRequest) -> HttpResponse:
    """Store each file sent. A full disk stops the upload there: 507 with the library and
    what was stored before it (the file it stopped at is not kept)."""
    try:
        with disk_full_refused():  # the request's temporary files are written here
            files = request.FILES.getlist("file")
    except InsufficientStorage as exc:
        messages.error(request, exc.message)
        return _render_library(request, request.POST, status=exc.http_status)
    if not files:
        messages.error(request, "Choose a file to upload.")
    stored = 0
    for upload in files:
        try:
            media_asset_create(
                workspace=request.workspace,
                file=upload,
                created_by=request.user,
                alt_text=request.POST.get("alt_text", ""),
                original_name=upload.name or "",
            )
        except ValidationFailed as exc:
            messages.error(request, f"{upload.name}: {exc.message}")
        except InsufficientStorage as exc:
            _uploaded(request, stored)
            messages.error(request, f"{upload.name}: {exc.message}")
            return _render_library(request, request.POST, status=exc.http_status)
        else:
            stored += 1
    _uploaded(request, stored)
    return redirect_to(request, _library_url(request))


def _uploaded(request: WorkspaceRequest, stored: int) -> None:
    if stored:
        messages.success(request, f"Uploaded {stored} file{'s' if stored != 1 else ''}.")


@workspace_view(Action.EDIT)
@require_POST
def media_alt_text(request: WorkspaceRequest, pk: int) -> HttpResponse:
    asset = get_object_or_404(MediaAsset.objects.for_workspace(request.workspace), pk=pk)
    error = ""
    status = 200
    try:
        media_alt_text_set(
            asset=asset, alt_text=request.POST.get("alt_text", "").strip(), actor=request.user
        )
    except DomainError as exc:  # too long, or held to the approval rule
        error, status = exc.message, exc.http_status
    asset.refresh_from_db()
    if is_htmx(request):
        context = {
            "workspace": request.workspace,
            "asset": asset,
            "uses": _usage([asset])[asset.pk],
            "alt_error": error,
            "alt_saved": not error,
        }
        return render(request, "web/media/_item.html", context, status=status)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, f"Alt text saved for {asset.original_name or 'the file'}.")
    return redirect_to(request, _library_url(request))


@workspace_view(Action.EDIT)
@require_POST
def media_delete(request: WorkspaceRequest, pk: int) -> HttpResponse:
    asset = get_object_or_404(MediaAsset.objects.for_workspace(request.workspace), pk=pk)
    name = asset.original_name or "the file"
    try:
        media_asset_delete(asset=asset)
    except Conflict as exc:
        messages.error(request, f"{name} was not deleted: {exc.message}")
    else:
        messages.success(request, f"Deleted {name}.")
    return redirect_to(request, _library_url(request))

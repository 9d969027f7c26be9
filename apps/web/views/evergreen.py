"""Evergreen posts: mark posts to be shared again into the queue's free slots, see each
one's turns and what its next turn does on each destination, change its settings, pause,
resume, skip a turn or stop it."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.db.models import Case, Prefetch, QuerySet, Value, When
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from apps.accounts.permissions import Action
from apps.common.errors import DomainError
from apps.planning.evergreen import (
    EvergreenSettings,
    evergreen_mark,
    evergreen_pause,
    evergreen_resume,
    evergreen_skip,
    evergreen_stop,
    evergreen_update,
)
from apps.planning.models import MAX_EVERGREEN_DAYS, EvergreenPost
from apps.planning.recycling import next_turn
from apps.publications.models import Publication, PublicationSegment
from apps.web.access import WorkspaceRequest, permits, post_only, workspace_view

# Posts offered to mark, newest first (older ones: from their own page's link).
POSTS_OFFERED = 100
VARIATION_SEPARATOR = "---"
# Evergreen posts the list shows (active ones first): each is a row, so the page's cost
# follows this, not the size of the library (the API lists them all, a page at a time).
EVERGREEN_SHOWN = 200


class EvergreenForm(forms.Form):
    every_days = forms.IntegerField(
        label="Share again every (days)",
        min_value=1,
        max_value=MAX_EVERGREEN_DAYS,
        initial=28,
        help_text="Counted from the last time it went out; 28 is every four weeks.",
    )
    min_gap_days = forms.IntegerField(
        label="Never on one account within (days)",
        min_value=0,
        max_value=MAX_EVERGREEN_DAYS,
        initial=7,
        help_text="A turn waits until it went out on each destination at least this long ago.",
    )
    max_shares = forms.IntegerField(
        label="Stop after (re-shares)", min_value=1, required=False, help_text="Empty: no limit."
    )
    ends_on = forms.DateField(
        label="Stop after this day",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="In the workspace's zone. Empty: no end date.",
    )
    variations = forms.CharField(
        label="Other texts for the first part",
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="Taken in turn with the post's own text; put a line holding only --- "
        "between two. X refuses a post identical to one it already has (LinkedIn "
        "within two days): without another text, a repeat is not sent there.",
    )

    def settings(self) -> EvergreenSettings:
        data = self.cleaned_data
        return EvergreenSettings(
            every_days=data["every_days"],
            min_gap_days=data["min_gap_days"],
            max_shares=data["max_shares"],
            ends_on=data["ends_on"],
            variations=split_variations(data["variations"]),
        )


def split_variations(text: str) -> tuple[str, ...]:
    blocks: list[list[str]] = [[]]
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip() == VARIATION_SEPARATOR:
            blocks.append([])
        else:
            blocks[-1].append(line)
    return tuple(t for t in ("\n".join(b).strip() for b in blocks) if t)


def join_variations(variations: list) -> str:
    return f"\n{VARIATION_SEPARATOR}\n".join(str(v) for v in variations)


class MarkForm(EvergreenForm):
    posts = forms.TypedMultipleChoiceField(
        label="Posts",
        coerce=int,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Pick at least one post."},
    )

    field_order = ["posts"]

    def __init__(self, *args, offered: list[Publication], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["posts"]
        assert isinstance(field, forms.TypedMultipleChoiceField)
        field.choices = [(p.pk, _label(p)) for p in offered]


def _first_text(publication: Publication) -> str:
    segments = list(publication.segments.all())
    return segments[0].text if segments else ""


def _label(publication: Publication) -> str:
    text = " ".join(_first_text(publication).split()) or "(no text)"
    short = text if len(text) <= 80 else f"{text[:79]}…"
    return f"{short} · {publication.get_status_display().lower()}"


def _first_segments() -> Prefetch:
    return Prefetch("segments", queryset=PublicationSegment.objects.order_by("position"))


def _offered(request: WorkspaceRequest) -> list[Publication]:
    """Recent posts not yet evergreen (nor cancelled), and the one named by ``post``."""
    posts = (
        Publication.objects.for_workspace(request.workspace)
        .exclude(status=Publication.Status.CANCELLED)
        .filter(evergreen__isnull=True)
        .prefetch_related(_first_segments())
    )
    offered = list(posts.order_by("-id")[:POSTS_OFFERED])
    named = request.GET.get("post", "")
    if named.isdigit() and all(p.pk != int(named) for p in offered):
        offered = [*posts.filter(pk=int(named)), *offered]
    return offered


# Active first, then paused, then ended.
_STATUS_ORDER = Case(
    When(status=EvergreenPost.Status.ACTIVE, then=Value(0)),
    When(status=EvergreenPost.Status.PAUSED, then=Value(1)),
    default=Value(2),
)


def _evergreens(request: WorkspaceRequest) -> QuerySet[EvergreenPost]:
    return (
        EvergreenPost.objects.for_workspace(request.workspace)
        .select_related("source")
        .prefetch_related(
            Prefetch("source__segments", PublicationSegment.objects.order_by("position"))
        )
        .order_by(_STATUS_ORDER, "-id")
    )


def _render_list(
    request: WorkspaceRequest, *, form: MarkForm | None = None, status: int = 200
) -> HttpResponse:
    offered = _offered(request)
    named = request.GET.get("post", "")
    initial = {"posts": [int(named)]} if named.isdigit() else None
    context = {
        "workspace": request.workspace,
        "section": "evergreen",
        "evergreens": [
            (row, _first_text(row.source)) for row in _evergreens(request)[:EVERGREEN_SHOWN]
        ],
        "form": form or MarkForm(offered=offered, initial=initial),
        "can_publish": permits(request, request.workspace, Action.PUBLISH),
    }
    return render(request, "web/evergreen/list.html", context, status=status)


@workspace_view(Action.VIEW)
@require_GET
def evergreen_list(request: WorkspaceRequest) -> HttpResponse:
    return _render_list(request)


@workspace_view(Action.PUBLISH)
@post_only("evergreen")
def evergreen_mark_view(request: WorkspaceRequest) -> HttpResponse:
    offered = _offered(request)
    form = MarkForm(request.POST, offered=offered)
    if not form.is_valid():
        return _render_list(request, form=form, status=400)
    chosen = set(form.cleaned_data["posts"])
    try:
        marked = evergreen_mark(
            workspace=request.workspace,
            publications=[p for p in offered if p.pk in chosen],
            actor=request.user,
            settings=form.settings(),
        )
    except DomainError as exc:
        form.add_error(None, exc.message)
        return _render_list(request, form=form, status=400)
    messages.success(request, f"{len(marked)} post{'s' if len(marked) != 1 else ''} evergreen.")
    return redirect("evergreen", workspace_slug=request.workspace.slug)


def _render_detail(
    request: WorkspaceRequest,
    row: EvergreenPost,
    *,
    form: EvergreenForm | None = None,
    status: int = 200,
) -> HttpResponse:
    initial = {
        "every_days": row.every_days,
        "min_gap_days": row.min_gap_days,
        "max_shares": row.max_shares,
        "ends_on": row.ends_on,
        "variations": join_variations(row.variations),
    }
    context = {
        "workspace": request.workspace,
        "section": "evergreen",
        "row": row,
        "text": _first_text(row.source),
        "next": next_turn(row) if row.status != EvergreenPost.Status.ENDED else None,
        "shares": row.shares.select_related("publication").order_by("-number")[:30],
        "form": form or EvergreenForm(initial=initial),
        "can_publish": permits(request, request.workspace, Action.PUBLISH),
    }
    return render(request, "web/evergreen/detail.html", context, status=status)


@workspace_view(Action.VIEW)
@require_GET
def evergreen_detail(request: WorkspaceRequest, pk: int) -> HttpResponse:
    return _render_detail(request, get_object_or_404(_evergreens(request), pk=pk))


@workspace_view(Action.PUBLISH)
@post_only("evergreen-detail", "pk")
def evergreen_update_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    row = get_object_or_404(_evergreens(request), pk=pk)
    form = EvergreenForm(request.POST)
    if not form.is_valid():
        return _render_detail(request, row, form=form, status=400)
    try:
        evergreen_update(evergreen=row, settings=form.settings())
    except DomainError as exc:
        form.add_error(None, exc.message)
        return _render_detail(request, row, form=form, status=400)
    messages.success(request, "Saved; the next turn is worked out again.")
    return redirect("evergreen-detail", workspace_slug=request.workspace.slug, pk=row.pk)


_ACTIONS: dict[str, tuple[Callable[[EvergreenPost], object], str]] = {
    "pause": (
        lambda row: evergreen_pause(evergreen=row),
        "Paused; its waiting re-share is withdrawn.",
    ),
    "resume": (lambda row: evergreen_resume(evergreen=row), "Resumed."),
    "skip": (lambda row: evergreen_skip(evergreen=row), "Skipped its next turn."),
    "stop": (lambda row: evergreen_stop(evergreen=row), "Stopped for good."),
}


@workspace_view(Action.PUBLISH)
@post_only("evergreen-detail", "pk")
def evergreen_action_view(request: WorkspaceRequest, pk: int, action: str) -> HttpResponse:
    """Pause, resume, skip the next turn, or stop."""
    row = get_object_or_404(_evergreens(request), pk=pk)
    if action not in _ACTIONS:
        return HttpResponse("No such action.", status=404)
    act, done = _ACTIONS[action]
    try:
        act(row)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, done)
    return redirect("evergreen-detail", workspace_slug=request.workspace.slug, pk=row.pk)

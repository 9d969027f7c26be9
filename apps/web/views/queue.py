"""The queue: each account's upcoming posts in slot order, reordered by drag (or the up
and down buttons), taken off the queue; and the page where posting slots are edited.

A move names the two posts that swap, each with the revision the page showed, so a post
changed meanwhile is refused (409) and the queue is shown again as it now is.
"""

from __future__ import annotations

from datetime import time

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.accounts.models import SocialAccount, Workspace
from apps.accounts.permissions import Action
from apps.analytics.selectors import workspace_best_times, zone_of
from apps.common.errors import DomainError
from apps.planning.models import WEEKDAY_NAMES, QueueSchedule
from apps.planning.selectors import account_queue, workspace_queues
from apps.planning.services import (
    queue_remove,
    queue_slots_replace,
    queue_slots_reset,
    queue_swap,
)
from apps.planning.slots import weekly_slots
from apps.publications.models import Publication
from apps.renditions.models import Rendition
from apps.web.access import WorkspaceRequest, is_htmx, permits, workspace_view
from apps.web.forms.common import ZoneNameInput, zone_name_choices
from apps.web.views.analytics import best_time_labels
from apps.web.views.common import redirect_to

WEEKDAY_CHOICES = list(enumerate(WEEKDAY_NAMES))


class SlotAddForm(forms.Form):
    weekdays = forms.TypedMultipleChoiceField(
        label="Days",
        choices=WEEKDAY_CHOICES,
        coerce=int,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Pick at least one day."},
    )
    time = forms.TimeField(
        label="Time", widget=forms.TimeInput(attrs={"type": "time"}, format="%H:%M")
    )


class SlotZoneForm(forms.Form):
    timezone = forms.ChoiceField(
        label="Time zone", required=False, choices=zone_name_choices, widget=ZoneNameInput
    )

    def __init__(self, *args, workspace: Workspace, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["timezone"]
        field.help_text = f"Empty: the workspace's zone ({workspace.default_timezone})."
        field.widget.attrs["placeholder"] = f"The workspace's zone ({workspace.default_timezone})"


def _queue_url(workspace: Workspace) -> str:
    return reverse("queue", kwargs={"workspace_slug": workspace.slug})


def _slots_url(workspace: Workspace, account: SocialAccount | None) -> str:
    url = reverse("queue-slots", kwargs={"workspace_slug": workspace.slug})
    return f"{url}?account={account.pk}" if account else url


@workspace_view(Action.VIEW)
@require_GET
def queue(request: WorkspaceRequest) -> HttpResponse:
    workspace = request.workspace
    context = {
        "workspace": workspace,
        "section": "queue",
        "queues": workspace_queues(workspace, now=timezone.now()),
        "zone": request.user.display_timezone,
        "can_publish": permits(request, workspace, Action.PUBLISH),
    }
    return render(request, "web/queue/page.html", context)


def _render_account(
    request: WorkspaceRequest, account: SocialAccount, *, error: str = "", status: int = 200
) -> HttpResponse:
    """After a change: the account's queue (htmx), or the queue page again."""
    if not is_htmx(request):
        if error:
            messages.error(request, error)
        return redirect_to(request, _queue_url(request.workspace) + f"#queue-{account.pk}")
    context = {
        "workspace": request.workspace,
        "q": account_queue(account, now=timezone.now()),
        "zone": request.user.display_timezone,
        "can_publish": True,
        "error": error,
    }
    return render(request, "web/queue/_account.html", context, status=status)


def _number(value: str | None) -> int:
    """A positive integer from the form, else -1 (which names no row and no revision)."""
    return int(value) if value and value.isdigit() else -1


@workspace_view(Action.PUBLISH)
@require_POST
def queue_move(request: WorkspaceRequest) -> HttpResponse:
    """Swap two posts of one account's queue: ``rendition`` + ``revision`` and ``swap``
    ("<rendition id>:<revision>", from an up/down button or a drop)."""
    renditions = Rendition.objects.for_workspace(request.workspace).select_related(
        "social_account", "publication"
    )
    first = get_object_or_404(renditions, pk=_number(request.POST.get("rendition")))
    other_id, _, other_revision = request.POST.get("swap", "").partition(":")
    second = get_object_or_404(renditions, pk=_number(other_id))
    try:
        queue_swap(
            first=first,
            first_revision=_number(request.POST.get("revision")),
            second=second,
            second_revision=_number(other_revision),
            actor=request.user,
        )
    except DomainError as exc:
        status = exc.http_status if exc.http_status != 404 else 400
        return _render_account(request, first.social_account, error=exc.message, status=status)
    if not is_htmx(request):
        messages.success(request, "Swapped the two posts' times.")
    return _render_account(request, first.social_account)


@workspace_view(Action.PUBLISH)
@require_POST
def queue_remove_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    """Take a post off the queue (back to drafts); ``account`` names the queue shown."""
    publication = get_object_or_404(Publication.objects.for_workspace(request.workspace), pk=pk)
    account = get_object_or_404(
        SocialAccount.objects.for_workspace(request.workspace),
        pk=_number(request.POST.get("account")),
    )
    try:
        queue_remove(
            publication=publication, expected_revision=_number(request.POST.get("revision"))
        )
    except DomainError as exc:
        return _render_account(request, account, error=exc.message, status=exc.http_status)
    if not is_htmx(request):
        messages.success(request, "Removed from the queue; the post is a draft again.")
    return _render_account(request, account)


def _slot_target(request: WorkspaceRequest) -> SocialAccount | None:
    """The account whose slots are edited (``account`` in the query or form), or None
    for the workspace's default slots."""
    raw = request.POST.get("account") or request.GET.get("account") or ""
    if not raw:
        return None
    return get_object_or_404(
        SocialAccount.objects.for_workspace(request.workspace).select_related("workspace"),
        pk=_number(raw),
    )


def _current(workspace: Workspace, account: SocialAccount | None) -> tuple[set, str, bool]:
    """(slots, zone as stored, has own slots) of the target."""
    schedule = QueueSchedule.objects.filter(workspace=workspace, social_account=account).first()
    if schedule is None:
        return set(), "", False
    return set(schedule.slots.values_list("weekday", "time")), schedule.timezone, True


@workspace_view(Action.VIEW, writes=True)  # viewers read the slots; POST edits them
@require_http_methods(["GET", "POST"])
def queue_slots(request: WorkspaceRequest) -> HttpResponse:
    """Edit the default slots or one account's: add a time on some days, remove one,
    change the zone, or (for an account) go back to the workspace's slots."""
    workspace = request.workspace
    account = _slot_target(request)
    slots, zone, is_set = _current(workspace, account)
    add_form = SlotAddForm()
    zone_form = SlotZoneForm(workspace=workspace, initial={"timezone": zone})
    status = 200
    if request.method == "POST":
        if not permits(request, workspace, Action.PUBLISH):
            return HttpResponse("Your role cannot change posting slots.", status=403)
        edited = _slot_edit(request, account=account, slots=slots, zone=zone)
        if isinstance(edited, HttpResponse):
            return edited
        if isinstance(edited, SlotAddForm):
            add_form, status = edited, 400
        elif isinstance(edited, SlotZoneForm):
            zone_form, status = edited, 400
    context = _slots_context(
        request,
        account=account,
        slots=slots,
        zone=zone,
        is_set=is_set,
        add_form=add_form,
        zone_form=zone_form,
    )
    return render(request, "web/queue/slots.html", context, status=status)


def _slot_edit(
    request: WorkspaceRequest,
    *,
    account: SocialAccount | None,
    slots: set,
    zone: str,
) -> HttpResponse | SlotAddForm | SlotZoneForm | None:
    """Apply the posted op to the target's slots: a redirect once saved (or refused), the
    form to show again with its errors, or None for an op that does not apply."""
    workspace = request.workspace
    op = request.POST.get("op", "")
    try:
        if op == "add":
            add_form = SlotAddForm(request.POST)
            if not add_form.is_valid():
                return add_form
            at: time = add_form.cleaned_data["time"]
            new = {(day, at.replace(second=0)) for day in add_form.cleaned_data["weekdays"]}
            queue_slots_replace(
                workspace=workspace, account=account, slots=slots | new, timezone=zone
            )
            messages.success(request, "Added the slot.")
        elif op.startswith("remove:"):
            day, _, hhmm = op.removeprefix("remove:").partition("-")
            gone = (int(day), time.fromisoformat(hhmm)) if day.isdigit() else None
            queue_slots_replace(
                workspace=workspace, account=account, slots=slots - {gone}, timezone=zone
            )
            messages.success(request, "Removed the slot.")
        elif op == "zone":
            zone_form = SlotZoneForm(request.POST, workspace=workspace)
            if not zone_form.is_valid():
                return zone_form
            queue_slots_replace(
                workspace=workspace,
                account=account,
                slots=slots,
                timezone=zone_form.cleaned_data["timezone"],
            )
            messages.success(request, "Saved the time zone.")
        elif op == "own" and account is not None:
            # Start from the default slots, so the account's own set can then differ.
            default = weekly_slots(account)
            queue_slots_replace(
                workspace=workspace, account=account, slots=set(default.times), timezone=""
            )
            messages.success(request, f"@{account.handle} now has slots of its own.")
        elif op == "reset" and account is not None:
            queue_slots_reset(account=account)
            messages.success(request, f"@{account.handle} follows the workspace's slots again.")
        else:
            return None
    except (DomainError, ValueError) as exc:
        messages.error(request, getattr(exc, "message", "That slot could not be read."))
    return redirect_to(request, _slots_url(workspace, account))


def _slots_context(
    request: WorkspaceRequest,
    *,
    account: SocialAccount | None,
    slots: set,
    zone: str,
    is_set: bool,
    add_form: SlotAddForm,
    zone_form: SlotZoneForm,
) -> dict:
    """The slots page's data: the target's times by weekday, its zone, and the accounts to
    switch to."""
    workspace = request.workspace
    by_day = [
        (index, name, sorted(at for day, at in slots if day == index))
        for index, name in WEEKDAY_CHOICES
    ]
    return {
        "workspace": workspace,
        "section": "queue",
        "target": account,
        "is_set": is_set,
        "effective": weekly_slots(account) if account else None,
        "by_day": by_day,
        "add_form": add_form,
        "zone_form": zone_form,
        "zone_shown": zone or workspace.default_timezone,
        "accounts": SocialAccount.objects.for_workspace(workspace)
        .exclude(status=SocialAccount.Status.DISABLED)
        .order_by("platform", "handle"),
        "can_publish": permits(request, workspace, Action.PUBLISH),
        # When the last 90 days' posts drew the most engagement (apps.analytics).
        "best_times": best_time_labels(
            workspace_best_times(workspace, today=timezone.localdate(timezone=zone_of(workspace)))
        ),
    }

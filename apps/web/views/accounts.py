"""A workspace's connected accounts: their status, connecting (the platforms' flows live
in apps.web.connect; the sandbox is connected here), reconnecting and disconnecting."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.db.models import Count, Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.models import SocialAccount
from apps.accounts.permissions import Action
from apps.accounts.services import social_account_disconnect
from apps.common.errors import DomainError
from apps.providers.base import SupportsOAuthConnect, SupportsPasswordConnect, get_adapter
from apps.providers.catalog import PlatformCapabilities, all_capabilities
from apps.renditions.models import Rendition
from apps.sandbox.services import sandbox_account_create, sandbox_account_reconnect
from apps.web import platform_notes
from apps.web.access import WorkspaceRequest, workspace_view
from apps.web.forms.common import apply_errors
from apps.web.forms.workspace import SandboxConnectForm

SANDBOX = "sandbox"


@dataclass(frozen=True)
class Connectable:
    platform: str
    capabilities: PlatformCapabilities
    url_name: str  # connect-start or connect-password

    @property
    def note(self) -> str:
        return platform_notes.connect_note(self.platform)

    @property
    def docs_page(self) -> str:
        return platform_notes.docs_page(self.platform)


def connectable_platforms() -> list[Connectable]:
    """Every catalogued platform the web app can connect, in catalog order."""
    found = []
    for platform, caps in all_capabilities().items():
        if platform == SANDBOX:
            continue
        try:
            adapter = get_adapter(platform)
        except LookupError:
            continue
        if isinstance(adapter, SupportsOAuthConnect):
            found.append(Connectable(platform, caps, "connect-start"))
        elif isinstance(adapter, SupportsPasswordConnect):
            found.append(Connectable(platform, caps, "connect-password"))
    return found


def _render(
    request: WorkspaceRequest, *, form: SandboxConnectForm | None = None, status: int = 200
) -> HttpResponse:
    workspace = request.workspace
    upcoming = Q(renditions__status=Rendition.Status.SCHEDULED)
    accounts = (
        SocialAccount.objects.for_workspace(workspace)
        .annotate(scheduled=Count("renditions", filter=upcoming))
        .order_by("platform", "handle")
    )
    capabilities = all_capabilities()
    rows = [
        {"account": account, "capabilities": capabilities.get(account.platform)}
        for account in accounts
    ]
    context = {
        "workspace": workspace,
        "section": "accounts",
        "rows": rows,
        "platforms": connectable_platforms(),
        "sandbox_enabled": settings.SANDBOX_ENABLED,
        "sandbox_capabilities": capabilities.get(SANDBOX),
        "form": form or SandboxConnectForm(),
    }
    return render(request, "web/accounts/list.html", context, status=status)


@workspace_view(Action.VIEW)
@require_GET
def accounts_list(request: WorkspaceRequest) -> HttpResponse:
    return _render(request)


@workspace_view(Action.ADMIN)
@require_POST
def sandbox_connect(request: WorkspaceRequest) -> HttpResponse:
    if not settings.SANDBOX_ENABLED:
        messages.error(request, "The sandbox platform is turned off on this installation.")
        return redirect("workspace-accounts", workspace_slug=request.workspace.slug)
    form = SandboxConnectForm(request.POST)
    if form.is_valid():
        try:
            account = sandbox_account_create(
                workspace=request.workspace,
                handle=form.cleaned_data["handle"],
                behaviour=form.behaviour(),
            )
        except DomainError as exc:
            if not apply_errors(form, exc.details, prefix="behaviour."):
                form.add_error(None, exc.message)
        else:
            messages.success(request, f"Connected the sandbox account @{account.handle}.")
            return redirect("workspace-accounts", workspace_slug=request.workspace.slug)
    return _render(request, form=form, status=400)


def _account(request: WorkspaceRequest, pk: int) -> SocialAccount:
    return get_object_or_404(SocialAccount.objects.for_workspace(request.workspace), pk=pk)


@workspace_view(Action.ADMIN)
@require_POST
def account_disconnect(request: WorkspaceRequest, pk: int) -> HttpResponse:
    account = _account(request, pk)
    if social_account_disconnect(account=account) is None:
        messages.success(request, f"Disconnected and removed @{account.handle}.")
    else:
        messages.success(
            request,
            f"Disconnected @{account.handle}: its credentials are erased. It stays listed as "
            "disabled because posts went to it; reconnect it any time.",
        )
    return redirect("workspace-accounts", workspace_slug=request.workspace.slug)


@workspace_view(Action.ADMIN)
@require_POST
def account_reconnect(request: WorkspaceRequest, pk: int) -> HttpResponse:
    account = _account(request, pk)
    if account.platform != SANDBOX:
        # The platform's own consent flow; the callback updates this same account.
        url_name = next(
            (c.url_name for c in connectable_platforms() if c.platform == account.platform),
            "connect-start",
        )
        return redirect(
            reverse(
                url_name,
                kwargs={"workspace_slug": request.workspace.slug, "platform": account.platform},
            )
        )
    try:
        sandbox_account_reconnect(account=account)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Reconnected @{account.handle}.")
    return redirect("workspace-accounts", workspace_slug=request.workspace.slug)

"""A workspace's connected accounts: their status, connecting (the platforms' flows live
in apps.web.connect; the sandbox is connected here), reconnecting and disconnecting."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.db.models import Count, Q, QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.accounts.models import SocialAccount, Workspace
from apps.accounts.permissions import Action
from apps.accounts.services import social_account_disconnect
from apps.common.errors import DomainError
from apps.providers.base import SupportsOAuthConnect, SupportsPasswordConnect, get_adapter
from apps.providers.catalog import PlatformCapabilities
from apps.providers.errors import ErrorKind
from apps.providers.live.readiness import effective_capabilities
from apps.publishing.services import MANUAL_RETRY_LIMIT, rendition_retry
from apps.renditions.models import Rendition
from apps.sandbox.services import sandbox_account_create, sandbox_account_reconnect
from apps.web import platform_notes
from apps.web.access import WorkspaceRequest, workspace_view
from apps.web.connect import not_configured_note
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

    @property
    def not_configured(self) -> str:
        """The operator note that replaces the connect button, or ""."""
        return not_configured_note(self.platform)


def auth_failed_renditions(workspace: Workspace) -> QuerySet[Rendition]:
    """The workspace's destinations that failed because a platform refused the account's
    token, and that a person may still retry (reconnecting the account makes them
    sendable again)."""
    return Rendition.objects.for_workspace(workspace).filter(
        status=Rendition.Status.FAILED,
        ambiguous=False,
        last_error__kind=ErrorKind.AUTH_EXPIRED,
        manual_retry_count__lt=MANUAL_RETRY_LIMIT,
    )


def connectable_platforms() -> list[Connectable]:
    """Every catalogued platform the web app can connect, in catalog order."""
    found = []
    for platform, caps in effective_capabilities().items():
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
    refused = Q(renditions__in=auth_failed_renditions(workspace))
    accounts = (
        SocialAccount.objects.for_workspace(workspace)
        .annotate(
            scheduled=Count("renditions", filter=upcoming, distinct=True),
            auth_failed=Count("renditions", filter=refused, distinct=True),
        )
        .order_by("platform", "handle")
    )
    capabilities = effective_capabilities()
    rows = [
        {"account": account, "capabilities": capabilities.get(account.platform)}
        for account in accounts
    ]
    context = {
        "workspace": workspace,
        "section": "accounts",
        "rows": rows,
        "to_reconnect": [
            account
            for account in accounts
            if account.status == SocialAccount.Status.NEEDS_RECONNECT
        ],
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
@require_http_methods(["GET", "POST"])
def sandbox_connect(request: WorkspaceRequest) -> HttpResponse:
    """Connect a sandbox account. A refused form is shown at this address, so a GET of it
    (a reload, a bookmark) goes back to the accounts page."""
    if request.method == "GET":
        return redirect("workspace-accounts", workspace_slug=request.workspace.slug)
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
        failed = auth_failed_renditions(request.workspace).filter(social_account=account).count()
        then = (
            f" {failed} post{pluralize(failed)} failed on its old token: retry "
            f"{'it' if failed == 1 else 'them'} from its row."
            if failed
            else ""
        )
        messages.success(request, f"Reconnected @{account.handle}.{then}")
    return redirect(_accounts_url(request, account))


def _accounts_url(request: WorkspaceRequest, account: SocialAccount) -> str:
    url = reverse("workspace-accounts", kwargs={"workspace_slug": request.workspace.slug})
    return f"{url}#account-{account.pk}"


@workspace_view(Action.PUBLISH)
@require_http_methods(["GET", "POST"])
def account_retry_failed(request: WorkspaceRequest, pk: int) -> HttpResponse:
    """Retry every destination of this account that failed on a refused token (after a
    reconnect). GET (a reload) goes back to the accounts page."""
    account = _account(request, pk)
    if request.method == "GET":
        return redirect(_accounts_url(request, account))
    if account.status != SocialAccount.Status.CONNECTED:
        messages.error(request, f"Reconnect @{account.handle} first: its token is still refused.")
        return redirect(_accounts_url(request, account))
    retried, refused = 0, []
    pending = auth_failed_renditions(request.workspace).filter(social_account=account)
    for rendition in pending.order_by("pk"):
        try:
            rendition_retry(rendition=rendition, user=request.user)
        except DomainError as exc:
            refused.append(exc.message)
        else:
            retried += 1
    if retried:
        messages.success(
            request, f"Retrying {retried} failed post{pluralize(retried)} to @{account.handle} now."
        )
    for message in refused:
        messages.error(request, message)
    if not retried and not refused:
        messages.info(request, f"No failed posts to @{account.handle} are waiting for a retry.")
    return redirect(_accounts_url(request, account))

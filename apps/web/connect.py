"""Connecting social accounts: the OAuth start and callback, and the app-password form.

The start stores a random state and a PKCE verifier in the session, keyed by the state, and
sends the person to the platform. The callback accepts only a state this session started,
exchanges the code, and stores the account through the accounts service (credentials are
encrypted there). Where the platform authorises a person who then picks the account to
publish as (a Facebook Page), the callback keeps the identity server-side and asks which
one; the choice stores it the same way. Only workspace admins connect accounts; a workspace
the user cannot see is a 404.
"""

from __future__ import annotations

import time

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET, require_http_methods

from apps.accounts.http import AuthenticatedRequest
from apps.accounts.models import Workspace
from apps.accounts.permissions import Action, can, workspaces_for
from apps.accounts.services import social_account_connect
from apps.common.errors import DomainError
from apps.providers import oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    SupportsAccountChoice,
    SupportsOAuthConnect,
    SupportsPasswordConnect,
    get_adapter,
)
from apps.providers.errors import ProviderError
from apps.web import platform_notes
from apps.web.access import read_only_refusal
from apps.web.connect_pending import pending_forget, pending_identity, pending_remember
from apps.web.templatetags.webapp import platform_name

# The settings a platform's app needs before anyone can connect an account to it, one
# tuple per value, any name in it will do (Threads and Instagram fall back to the Meta
# app). Mastodon registers itself on each server and Bluesky uses app passwords, so they
# need none.
APP_SETTINGS: dict[str, tuple[tuple[str, ...], ...]] = {
    "x": (("X_CLIENT_ID",),),
    "linkedin": (("LINKEDIN_CLIENT_ID",), ("LINKEDIN_CLIENT_SECRET",)),
    "facebook": (("META_APP_ID",), ("META_APP_SECRET",)),
    "threads": (("THREADS_APP_ID", "META_APP_ID"), ("THREADS_APP_SECRET", "META_APP_SECRET")),
    "instagram": (
        ("INSTAGRAM_APP_ID", "META_APP_ID"),
        ("INSTAGRAM_APP_SECRET", "META_APP_SECRET"),
    ),
    "tiktok": (("TIKTOK_CLIENT_KEY",), ("TIKTOK_CLIENT_SECRET",)),
    "youtube": (("GOOGLE_CLIENT_ID",), ("GOOGLE_CLIENT_SECRET",)),
    "pinterest": (("PINTEREST_APP_ID",), ("PINTEREST_APP_SECRET",)),
    "reddit": (("REDDIT_CLIENT_ID",), ("REDDIT_CLIENT_SECRET",)),
}


def missing_app_settings(platform: str) -> list[str]:
    """The settings an operator still has to give before `platform` can be connected
    ("THREADS_APP_ID or META_APP_ID"); empty when it is ready."""
    return [
        " or ".join(names)
        for names in APP_SETTINGS.get(platform, ())
        if not any(getattr(settings, name, "") for name in names)
    ]


def not_configured_note(platform: str) -> str:
    """The operator note shown instead of a connect button, or "" when configured."""
    missing = missing_app_settings(platform)
    if not missing:
        return ""
    return (
        f"Not set up on this installation yet: an operator sets {', '.join(missing)} "
        f"(see {platform_notes.docs_page(platform)})."
    )


SESSION_KEY = "connect_flows"
FLOW_TTL_S = 600  # a person has ten minutes at the platform's consent screen
MAX_FLOWS = 5


class AppPasswordForm(forms.Form):
    identifier = forms.CharField(label="Handle or e-mail", max_length=253)
    password = forms.CharField(
        label="App password",
        max_length=128,
        strip=False,
        widget=forms.PasswordInput(attrs={"aria-describedby": "password_help"}),
    )
    service = forms.CharField(
        label="Server (leave empty for bsky.social)", max_length=253, required=False
    )


class AccountChoiceForm(forms.Form):
    """One of the accounts the connected person may publish as."""

    choice = forms.ChoiceField(
        widget=forms.RadioSelect,
        error_messages={
            "required": "Choose the Page to publish as.",
            "invalid_choice": "That is not one of the Pages listed that you can publish to. "
            "Choose one of them.",
        },
    )

    def __init__(self, *args, choices: list[dict], **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["choice"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [(c["id"], c["name"]) for c in choices if c["can_publish"]]


def _admin_workspace(request: AuthenticatedRequest, slug: str) -> Workspace:
    workspace = get_object_or_404(workspaces_for(request.user), slug=slug)
    if not can(request.user, workspace, Action.ADMIN):
        raise PermissionDenied("Only workspace admins connect accounts.")
    return workspace


def _adapter(platform: str) -> Adapter:
    try:
        return get_adapter(platform)
    except LookupError:
        raise Http404("Unknown platform.") from None


def _redirect_uri(platform: str) -> str:
    return settings.SITE_URL.rstrip("/") + reverse("connect-callback", args=[platform])


def _accounts_url(workspace: Workspace) -> str:
    try:
        return reverse("workspace-accounts", kwargs={"workspace_slug": workspace.slug})
    except NoReverseMatch:  # the accounts page arrives with the full web app
        return reverse("home")


def _remember_flow(request: HttpRequest, state: str, flow: dict) -> None:
    now = time.time()
    flows = {
        key: value
        for key, value in request.session.get(SESSION_KEY, {}).items()
        if now - value["started"] < FLOW_TTL_S
    }
    flows[state] = {**flow, "started": now}
    # Keep the newest few: abandoned attempts must not grow the session forever.
    newest = sorted(flows.items(), key=lambda item: item[1]["started"])[-MAX_FLOWS:]
    request.session[SESSION_KEY] = dict(newest)


def _take_flow(request: HttpRequest, state: str) -> dict | None:
    """The flow this session started with `state`, removed so a callback works once."""
    flows = request.session.get(SESSION_KEY, {})
    flow = flows.pop(state, None) if state else None
    request.session[SESSION_KEY] = flows
    if flow is None or time.time() - flow["started"] >= FLOW_TTL_S:
        return None
    return flow


def _failed(
    request: HttpRequest, message: str, *, status: int, workspace: Workspace | None = None
) -> HttpResponse:
    context = {"message": message, "workspace": workspace}
    return render(request, "web/connect_error.html", context, status=status)


def _connected(
    request: HttpRequest, workspace: Workspace, platform: str, identity: ConnectedIdentity
) -> HttpResponse:
    social_account_connect(
        workspace=workspace,
        platform=platform,
        remote_id=identity.remote_id,
        handle=identity.handle,
        display_name=identity.display_name,
        credentials=identity.credentials,
        token_expires_at=identity.token_expires_at,
        settings=identity.settings,
    )
    messages.success(request, f"Connected {identity.handle} on {platform_name(platform)}.")
    return redirect(_accounts_url(workspace))


def _choice_page(
    request: HttpRequest,
    workspace: Workspace,
    platform: str,
    choices: list[dict],
    *,
    form: AccountChoiceForm | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "workspace": workspace,
        "platform": platform,
        "choices": choices,
        "form": form,
        "can_publish_any": any(c["can_publish"] for c in choices),
    }
    return render(request, "web/connect_choose.html", context, status=status)


def _connected_or_ask(
    request: AuthenticatedRequest,
    workspace: Workspace,
    platform: str,
    adapter: Adapter,
    identity: ConnectedIdentity,
) -> HttpResponse:
    """Store the identity, or ask which account to publish as when the platform has several."""
    choices = (
        adapter.account_choices(identity) if isinstance(adapter, SupportsAccountChoice) else []
    )
    if not choices:
        return _connected(request, workspace, platform, identity)
    if not any(c["can_publish"] for c in choices):
        # Nothing is kept: there is nothing the person could pick.
        return _choice_page(request, workspace, platform, choices, status=400)
    key = pending_remember(request, workspace=workspace, platform=platform, identity=identity)
    return redirect("connect-choose", workspace_slug=workspace.slug, platform=platform, pending=key)


@login_required
@require_http_methods(["GET", "POST"])
def connect_start(
    request: AuthenticatedRequest, workspace_slug: str, platform: str
) -> HttpResponse:
    """GET: a page with the connect button (and the instance field where the platform is
    federated). POST: remember state + PKCE verifier, redirect to the platform."""
    workspace = _admin_workspace(request, workspace_slug)
    adapter = _adapter(platform)
    if not isinstance(adapter, SupportsOAuthConnect):
        if isinstance(adapter, SupportsPasswordConnect):
            return redirect("connect-password", workspace_slug=workspace.slug, platform=platform)
        raise Http404("This platform cannot be connected from the web app.")
    asks_instance = getattr(adapter, "connect_asks_instance", False)
    context = {
        "workspace": workspace,
        "platform": platform,
        "asks_instance": asks_instance,
        "note": platform_notes.connect_note(platform),
        "docs_page": platform_notes.docs_page(platform),
        "not_configured": not_configured_note(platform),
    }
    if context["not_configured"]:
        # Never send a person to the platform with an empty client id.
        status = 200 if request.method == "GET" else 503
        return render(request, "web/connect_start.html", context, status=status)
    if request.method == "GET":
        return render(request, "web/connect_start.html", context)
    if refused := read_only_refusal(request, workspace.organization):
        return refused
    instance = request.POST.get("instance", "").strip() or None
    if asks_instance and not instance:
        context["error"] = "Enter your server's domain, for example mastodon.social."
        return render(request, "web/connect_start.html", context, status=400)
    state, verifier = oauth.new_state(), oauth.new_code_verifier()
    redirect_uri = _redirect_uri(platform)
    try:
        url = adapter.authorization_url(
            state=state,
            code_challenge=oauth.code_challenge(verifier),
            redirect_uri=redirect_uri,
            instance=instance,
        )
    except (ProviderError, DomainError) as exc:
        context["error"] = exc.message
        return render(request, "web/connect_start.html", context, status=400)
    _remember_flow(
        request,
        state,
        {
            "platform": platform,
            "workspace_id": workspace.pk,
            "verifier": verifier,
            "redirect_uri": redirect_uri,
            "instance": instance,
        },
    )
    return HttpResponseRedirect(url)


@login_required
@require_GET
def connect_callback(request: AuthenticatedRequest, platform: str) -> HttpResponse:
    """Where the platform sends the person back, with `code` and `state` or an `error`."""
    flow = _take_flow(request, request.GET.get("state", ""))
    if flow is None or flow["platform"] != platform:
        return _failed(
            request,
            "This connection attempt was not started here or has expired. Start again.",
            status=400,
        )
    workspace = get_object_or_404(workspaces_for(request.user), pk=flow["workspace_id"])
    if not can(request.user, workspace, Action.ADMIN):
        raise PermissionDenied("Only workspace admins connect accounts.")
    if refused := read_only_refusal(request, workspace.organization, writes=True):
        return refused
    error = request.GET.get("error")
    if error:
        # access_denied (OAuth 2), user_cancelled_login / user_cancelled_authorize (LinkedIn)
        denied = error == "access_denied" or error.startswith("user_cancelled")
        message = (
            "The connection was cancelled at the platform; nothing was connected."
            if denied
            else f"The platform refused the connection ({error})."
        )
        return _failed(request, message, status=400, workspace=workspace)
    code = request.GET.get("code")
    if not code:
        return _failed(request, "The platform sent no authorization code.", status=400)
    adapter = _adapter(platform)
    if not isinstance(adapter, SupportsOAuthConnect):
        # A flow is remembered only for an OAuth platform (connect_start).
        raise Http404("This platform cannot be connected from the web app.")
    try:
        identity = adapter.complete_connect(
            code=code,
            code_verifier=flow["verifier"],
            redirect_uri=flow["redirect_uri"],
            instance=flow.get("instance"),
        )
    except (ProviderError, DomainError) as exc:
        return _failed(
            request, f"Connecting failed: {exc.message}", status=502, workspace=workspace
        )
    return _connected_or_ask(request, workspace, platform, adapter, identity)


@login_required
@require_http_methods(["GET", "POST"])
def connect_choose(
    request: AuthenticatedRequest, workspace_slug: str, platform: str, pending: str
) -> HttpResponse:
    """GET: the accounts the connected person may publish as. POST: store the chosen one."""
    workspace = _admin_workspace(request, workspace_slug)
    if refused := read_only_refusal(request, workspace.organization):
        return refused
    adapter = _adapter(platform)
    identity = None
    if isinstance(adapter, SupportsAccountChoice):
        identity = pending_identity(request, pending, workspace=workspace, platform=platform)
    if identity is None or not isinstance(adapter, SupportsAccountChoice):
        return _failed(
            request,
            "This choice was not started here or has expired (you have ten minutes). "
            "Connect the account again.",
            status=400,
            workspace=workspace,
        )
    choices = adapter.account_choices(identity)
    form = AccountChoiceForm(request.POST if request.method == "POST" else None, choices=choices)
    if form.is_valid():
        try:
            chosen = adapter.select_account(identity, choice_id=form.cleaned_data["choice"])
        except LookupError as exc:
            form.add_error("choice", str(exc))
        except (ProviderError, DomainError) as exc:
            return _failed(
                request, f"Connecting failed: {exc.message}", status=502, workspace=workspace
            )
        else:
            pending_forget(request, pending)
            return _connected(request, workspace, platform, chosen)
    status = 400 if form.errors else 200
    return _choice_page(request, workspace, platform, choices, form=form, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def connect_password(
    request: AuthenticatedRequest, workspace_slug: str, platform: str
) -> HttpResponse:
    """Platforms connected with an app password (Bluesky): a form, then a session login."""
    workspace = _admin_workspace(request, workspace_slug)
    if refused := read_only_refusal(request, workspace.organization):
        return refused
    adapter = _adapter(platform)
    if not isinstance(adapter, SupportsPasswordConnect):
        raise Http404("This platform does not connect with an app password.")
    form = AppPasswordForm(request.POST or None)
    context = {"workspace": workspace, "platform": platform, "form": form}
    if request.method == "GET" or not form.is_valid():
        return render(
            request, "web/connect_password.html", context, status=400 if form.errors else 200
        )
    try:
        identity = adapter.connect_with_password(
            identifier=form.cleaned_data["identifier"],
            password=form.cleaned_data["password"],
            service=form.cleaned_data["service"] or None,
        )
    except (ProviderError, DomainError) as exc:
        context["error"] = exc.message
        return render(request, "web/connect_password.html", context, status=400)
    return _connected_or_ask(request, workspace, platform, adapter, identity)

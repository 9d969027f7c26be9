"""A workspace's API tokens: create one (its secret is shown once) and revoke; confirm a
``socialpost login`` in the browser."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from apps.accounts.cli_login import cli_login_confirm
from apps.accounts.models import ApiToken, User, Workspace
from apps.accounts.permissions import Action, workspaces_for
from apps.accounts.services import IssuedToken, api_token_create, api_token_revoke
from apps.accounts.token_roles import effective_scopes
from apps.common.errors import DomainError
from apps.web.access import WorkspaceRequest, post_only, user_view, workspace_view
from apps.web.forms.workspace import TokenCreateForm


def _render(
    request: WorkspaceRequest,
    *,
    form: TokenCreateForm | None = None,
    issued: IssuedToken | None = None,
    status: int = 200,
) -> HttpResponse:
    tokens = list(
        ApiToken.objects.for_workspace(request.workspace)
        .select_related("created_by")
        .order_by("revoked_at", "-created_at")
    )
    effective_scopes(tokens, workspace=request.workspace)
    context = {
        "workspace": request.workspace,
        "section": "tokens",
        "tokens": tokens,
        "form": form or TokenCreateForm(),
        "issued": issued,
    }
    response = render(request, "web/tokens/list.html", context, status=status)
    if issued is not None:
        response["Cache-Control"] = "no-store"  # the secret must not sit in a cache
    return response


@workspace_view(Action.ADMIN)
@require_GET
def token_list(request: WorkspaceRequest) -> HttpResponse:
    return _render(request)


@workspace_view(Action.ADMIN)
@post_only("api-tokens")
def token_create(request: WorkspaceRequest) -> HttpResponse:
    form = TokenCreateForm(request.POST)
    if form.is_valid():
        try:
            issued = api_token_create(
                workspace=request.workspace,
                name=form.cleaned_data["name"],
                scopes=form.cleaned_data["scopes"],
                created_by=request.user,
            )
        except DomainError as exc:
            form.add_error("scopes", exc.message)
        else:
            # Rendered, not redirected: the clear secret exists only in this response.
            return _render(request, issued=issued, status=201)
    return _render(request, form=form, status=400)


@workspace_view(Action.ADMIN)
@post_only("api-tokens")
def token_revoke(request: WorkspaceRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ApiToken.objects.for_workspace(request.workspace), pk=pk)
    api_token_revoke(token=token)
    messages.success(request, f"Revoked {token.name} ({token.prefix}…). It no longer works.")
    return redirect("api-tokens", workspace_slug=request.workspace.slug)


class CliLoginForm(forms.Form):
    code = forms.CharField(max_length=20, label="Code shown by socialpost login")
    workspace = forms.ModelChoiceField(queryset=Workspace.objects.none())
    scopes = forms.MultipleChoiceField(
        choices=[(s, s) for s in ("read", "write", "publish", "admin")],
        widget=forms.CheckboxSelectMultiple,
        initial=["read", "write", "publish"],
    )

    def __init__(self, *args, user: User, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["workspace"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = workspaces_for(user)


@user_view
@require_http_methods(["GET", "POST"])
def cli_login_confirm_view(request: HttpRequest) -> HttpResponse:
    """Confirm a ``socialpost login``: the code the command shows, the workspace and the
    scopes (at most what the person's role there allows). The command then receives a
    token of theirs, listed on the workspace's tokens page as the command line's."""
    user = request.user
    assert isinstance(user, User)
    confirmed = None
    if request.method == "POST":
        form = CliLoginForm(request.POST, user=user)
        if form.is_valid():
            try:
                confirmed = cli_login_confirm(
                    user_code=form.cleaned_data["code"],
                    user=user,
                    workspace=form.cleaned_data["workspace"],
                    scopes=form.cleaned_data["scopes"],
                )
            except DomainError as exc:
                form.add_error(None, exc.message)
    else:
        form = CliLoginForm(initial={"code": request.GET.get("code", "")}, user=user)
    status = 200 if confirmed or request.method == "GET" else 400
    return render(
        request, "web/tokens/cli_login.html", {"form": form, "confirmed": confirmed}, status=status
    )

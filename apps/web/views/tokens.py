"""A workspace's API tokens: create one (its secret is shown once) and revoke."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.models import ApiToken
from apps.accounts.permissions import Action
from apps.accounts.services import IssuedToken, api_token_create, api_token_revoke
from apps.common.errors import DomainError
from apps.web.access import WorkspaceRequest, workspace_view
from apps.web.forms.workspace import TokenCreateForm


def _render(
    request: WorkspaceRequest,
    *,
    form: TokenCreateForm | None = None,
    issued: IssuedToken | None = None,
    status: int = 200,
) -> HttpResponse:
    tokens = (
        ApiToken.objects.for_workspace(request.workspace)
        .select_related("created_by")
        .order_by("revoked_at", "-created_at")
    )
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
@require_POST
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
@require_POST
def token_revoke(request: WorkspaceRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ApiToken.objects.for_workspace(request.workspace), pk=pk)
    api_token_revoke(token=token)
    messages.success(request, f"Revoked {token.name} ({token.prefix}…). It no longer works.")
    return redirect("api-tokens", workspace_slug=request.workspace.slug)

"""Reading the sandbox's witness (`GET /sandbox/posts`) the way its owner does: with an
API token of the workspace that holds the sandbox account."""

from __future__ import annotations

import httpx

from apps.accounts import services as account_services
from apps.accounts.models import SocialAccount, Workspace


def witness_response(base_url: str, handle: str, workspace: Workspace | None = None):
    """The witness answer for `handle`, read with a short-lived `read` token of its
    workspace (by default the one workspace that has a sandbox account of that handle)."""
    if workspace is None:
        workspace = SocialAccount.objects.get(platform="sandbox", handle=handle).workspace
    issued = account_services.api_token_create(workspace=workspace, name="witness", scopes=["read"])
    try:
        return httpx.get(
            f"{base_url}/sandbox/posts",
            params={"handle": handle},
            headers={"Authorization": f"Bearer {issued.clear}"},
        )
    finally:
        account_services.api_token_revoke(token=issued.token)


def witness_posts(base_url: str, handle: str, workspace: Workspace | None = None) -> list[dict]:
    response = witness_response(base_url, handle, workspace)
    assert response.status_code == 200, response.text
    return response.json()["posts"]

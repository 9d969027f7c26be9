"""Every endpoint, walked: 401 without a token and with a revoked one, 403 for a token
lacking the scope, and 404 for another workspace's ids (never 403, never its data)."""

from dataclasses import dataclass
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from apps.accounts import services
from apps.accounts.models import ApiToken, SocialAccount
from apps.publications.models import Publication
from apps.renditions.models import Rendition, normalize_error
from tests.api.helpers import bearer, error, png_bytes
from tests.conftest import ALL_SCOPES
from tests.factories import (
    MediaAssetFactory,
    PublicationFactory,
    RenditionFactory,
    SocialAccountFactory,
)


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    path: str  # {account}, {media}, {publication}, {rendition}, {token}: ids to fill in
    body: Any = None
    scope: str | None = "read"

    def call(self, client: APIClient, ids: dict[str, int]):
        path = self.path.format(**ids)
        body = self.body(ids) if callable(self.body) else self.body
        if self.name == "media upload":
            upload = SimpleUploadedFile("a.png", png_bytes(), content_type="image/png")
            return client.post(path, {"file": upload}, format="multipart")
        return getattr(client, self.method)(path, body, format="json")


ENDPOINTS = [
    Endpoint("me", "get", "/api/v1/me", scope=None),
    Endpoint("capabilities", "get", "/api/v1/capabilities"),
    Endpoint("accounts list", "get", "/api/v1/accounts"),
    Endpoint("account detail", "get", "/api/v1/accounts/{account}"),
    Endpoint(
        "account create",
        "post",
        "/api/v1/accounts",
        {"platform": "sandbox", "handle": "walker"},
        "write",
    ),
    Endpoint("account disconnect", "delete", "/api/v1/accounts/{account}", scope="write"),
    Endpoint("media list", "get", "/api/v1/media"),
    Endpoint("media detail", "get", "/api/v1/media/{media}"),
    Endpoint("media upload", "post", "/api/v1/media", scope="write"),
    Endpoint("publications list", "get", "/api/v1/publications"),
    Endpoint(
        "publication create",
        "post",
        "/api/v1/publications",
        lambda ids: {
            "segments": [{"text": "Hi", "media": [{"id": ids["media"]}]}],
            "destinations": [{"account": ids["account"]}],
        },
        "write",
    ),
    Endpoint(
        "publication validate",
        "post",
        "/api/v1/publications/validate",
        {"text": "Hi"},
        "read",
    ),
    Endpoint("publication detail", "get", "/api/v1/publications/{publication}"),
    Endpoint(
        "publication edit",
        "patch",
        "/api/v1/publications/{publication}",
        {"revision": 1, "text": "Edited"},
        "write",
    ),
    Endpoint("publication cancel", "delete", "/api/v1/publications/{publication}", scope="write"),
    Endpoint(
        "publication retry", "post", "/api/v1/publications/{publication}/retry", scope="publish"
    ),
    Endpoint("rendition detail", "get", "/api/v1/renditions/{rendition}"),
    Endpoint(
        "rendition resolve",
        "post",
        "/api/v1/renditions/{rendition}/resolve",
        {"outcome": "failed"},
        "publish",
    ),
    Endpoint("tokens list", "get", "/api/v1/tokens"),
    Endpoint("token create", "post", "/api/v1/tokens", {"name": "n", "scopes": ["read"]}, "write"),
    Endpoint("token revoke", "delete", "/api/v1/tokens/{token}", scope="write"),
]
BY_NAME = pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
# Endpoints that name an object of the workspace, in the URL or in the body.
NAMES_AN_OBJECT = [e for e in ENDPOINTS if "{" in e.path or callable(e.body)]


def _objects(workspace) -> dict[str, int]:
    account = SocialAccountFactory(workspace=workspace, platform="sandbox")
    media = MediaAssetFactory(workspace=workspace)
    publication = PublicationFactory(workspace=workspace, status="failed")
    rendition = RenditionFactory(
        publication=publication,
        social_account=account,
        status="failed",
        ambiguous=True,
        last_error=normalize_error({"kind": "timeout_after_send", "message": "No answer."}),
    )
    RenditionFactory(  # a clean failure, for retry
        publication=publication,
        status="failed",
        last_error=normalize_error({"kind": "content_rejected", "message": "No."}),
    )
    token = services.api_token_create(workspace=workspace, name="other", scopes=["read"]).token
    return {
        "account": account.pk,
        "media": media.pk,
        "publication": publication.pk,
        "rendition": rendition.pk,
        "token": token.pk,
    }


@pytest.fixture
def ids_a(workspace_a) -> dict[str, int]:
    return _objects(workspace_a)


@pytest.fixture
def ids_b(workspace_b) -> dict[str, int]:
    return _objects(workspace_b)


@BY_NAME
def test_without_a_token_it_is_401(endpoint, ids_a):
    response = endpoint.call(APIClient(), ids_a)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert error(response)["code"] == "UNAUTHENTICATED"


@BY_NAME
def test_with_a_revoked_token_it_is_401(endpoint, ids_a, workspace_a, make_token):
    issued = make_token(workspace_a)
    services.api_token_revoke(token=issued.token)

    response = endpoint.call(bearer(issued.clear), ids_a)

    assert response.status_code == 401
    assert error(response)["code"] == "INVALID_TOKEN"


@pytest.mark.parametrize(
    "endpoint", [e for e in ENDPOINTS if e.scope], ids=lambda e: f"{e.name} needs {e.scope}"
)
def test_without_its_scope_it_is_403(endpoint, ids_a, workspace_a, make_token):
    scopes = [s for s in ALL_SCOPES if s != endpoint.scope]
    client = bearer(make_token(workspace_a, scopes=scopes).clear)

    response = endpoint.call(client, ids_a)

    assert response.status_code == 403
    err = error(response)
    assert err["code"] == "INSUFFICIENT_SCOPE"
    assert endpoint.scope in err["details"]["required"]


@pytest.mark.parametrize("endpoint", NAMES_AN_OBJECT, ids=lambda e: e.name)
def test_another_workspaces_ids_are_404(endpoint, api_a, ids_a, ids_b):
    before = {
        "account": SocialAccount.objects.get(pk=ids_b["account"]).status,
        "publication": Publication.objects.get(pk=ids_b["publication"]).status,
        "rendition": Rendition.objects.get(pk=ids_b["rendition"]).status,
        "token": ApiToken.objects.get(pk=ids_b["token"]).revoked_at,
    }

    response = endpoint.call(api_a, ids_b)

    assert response.status_code == 404, response.json()
    assert error(response)["code"] == "NOT_FOUND"
    after = {
        "account": SocialAccount.objects.get(pk=ids_b["account"]).status,
        "publication": Publication.objects.get(pk=ids_b["publication"]).status,
        "rendition": Rendition.objects.get(pk=ids_b["rendition"]).status,
        "token": ApiToken.objects.get(pk=ids_b["token"]).revoked_at,
    }
    assert after == before


@pytest.mark.parametrize("endpoint", NAMES_AN_OBJECT, ids=lambda e: e.name)
def test_the_same_endpoints_work_with_this_workspaces_ids(endpoint, api_a, ids_a):
    response = endpoint.call(api_a, ids_a)
    assert response.status_code < 400, response.json()


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/api/v1/accounts", "account"),
        ("/api/v1/media", "media"),
        ("/api/v1/publications", "publication"),
        ("/api/v1/tokens", "token"),
    ],
)
def test_lists_show_nothing_of_another_workspace(path, kind, api_a, ids_a, ids_b):
    shown = {item["id"] for item in api_a.get(path).json()["results"]}
    assert ids_a[kind] in shown
    assert ids_b[kind] not in shown

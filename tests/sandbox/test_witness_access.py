"""The sandbox's witness pages answer only the workspace that owns the account: its API
token (`read`) or a signed-in member. Anyone else gets the API's error envelope, and
another workspace's account is a 404."""

import pytest
from django.test import Client

from apps.accounts import services as account_services
from apps.sandbox.models import SandboxAccount, SandboxPost
from apps.sandbox.services import sandbox_account_create
from tests.factories import WorkspaceFactory

pytestmark = pytest.mark.django_db

WITNESS = "/sandbox/posts"


def _post(workspace, handle, text):
    sandbox_account_create(workspace=workspace, handle=handle)
    account = SandboxAccount.objects.get(workspace=workspace, handle=handle)
    return SandboxPost.objects.create(account=account, text=text)


def _bearer(workspace, scopes=("read",)):
    clear = account_services.api_token_create(
        workspace=workspace, name="t", scopes=list(scopes)
    ).clear
    return {"HTTP_AUTHORIZATION": f"Bearer {clear}"}


def _as(user):
    client = Client()
    client.force_login(user)
    return client


def _error(response, status):
    assert response.status_code == status, response.content
    return response.json()["error"]


def test_without_credentials_the_witness_is_refused(workspace_a):
    _post(workspace_a, "news", "secret draft")
    error = _error(Client().get(WITNESS, {"handle": "news"}), 401)
    assert error["code"] == "NOT_AUTHENTICATED"
    assert "Bearer" in error["message"]


def test_an_unknown_token_is_refused(workspace_a):
    _post(workspace_a, "news", "secret draft")
    response = Client().get(WITNESS, {"handle": "news"}, HTTP_AUTHORIZATION="Bearer sp_nope")
    assert _error(response, 401)["code"] == "INVALID_TOKEN"


def test_a_token_without_read_is_refused(workspace_a):
    _post(workspace_a, "news", "secret draft")
    response = Client().get(WITNESS, {"handle": "news"}, **_bearer(workspace_a, ["write"]))
    assert _error(response, 403)["code"] == "INSUFFICIENT_SCOPE"


def test_another_workspaces_token_or_member_sees_a_404(workspace_a, workspace_b, charlie):
    _post(workspace_a, "news", "secret draft")
    response = Client().get(WITNESS, {"handle": "news"}, **_bearer(workspace_b))
    assert _error(response, 404)["code"] == "NOT_FOUND"
    response = _as(charlie).get(WITNESS, {"handle": "news"})
    assert _error(response, 404)["code"] == "NOT_FOUND"
    # Naming the other workspace does not help.
    response = _as(charlie).get(WITNESS, {"handle": "news", "workspace": "ws-a"})
    assert _error(response, 404)["code"] == "NOT_FOUND"


def test_the_owner_reads_its_witness_by_token_or_session(workspace_a, vera):
    _post(workspace_a, "news", "hello")
    by_token = Client().get(WITNESS, {"handle": "news"}, **_bearer(workspace_a))
    assert by_token.status_code == 200
    assert [p["text"] for p in by_token.json()["posts"]] == ["hello"]
    by_viewer = _as(vera).get(WITNESS, {"handle": "news"})
    assert by_viewer.status_code == 200
    assert by_viewer.json()["count"] == 1


def test_one_handle_in_two_workspaces_keeps_their_posts_apart(workspace_a, workspace_b):
    _post(workspace_a, "news", "from A")
    _post(workspace_b, "news", "from B")
    a = Client().get(WITNESS, {"handle": "news"}, **_bearer(workspace_a)).json()
    b = Client().get(WITNESS, {"handle": "news"}, **_bearer(workspace_b)).json()
    assert [p["text"] for p in a["posts"]] == ["from A"]
    assert [p["text"] for p in b["posts"]] == ["from B"]


def test_a_member_of_two_workspaces_with_the_handle_names_the_workspace(alice, org_a, workspace_a):
    other = WorkspaceFactory(organization=org_a, name="Other", slug="ws-other")
    _post(workspace_a, "news", "from A")
    _post(other, "news", "from other")
    error = _error(_as(alice).get(WITNESS, {"handle": "news"}), 400)
    assert error["code"] == "AMBIGUOUS_HANDLE"
    assert error["details"] == {"workspaces": ["ws-a", "ws-other"]}
    picked = _as(alice).get(WITNESS, {"handle": "news", "workspace": "ws-other"})
    assert [p["text"] for p in picked.json()["posts"]] == ["from other"]


def test_a_post_page_answers_its_workspace_only(workspace_a, workspace_b, vera, charlie):
    post = _post(workspace_a, "news", "hello")
    page = f"/sandbox/@news/{post.pk}"
    assert _error(Client().get(page), 401)["code"] == "NOT_AUTHENTICATED"
    assert _error(Client().get(page, **_bearer(workspace_b)), 404)["code"] == "NOT_FOUND"
    assert _error(_as(charlie).get(page), 404)["code"] == "NOT_FOUND"
    assert Client().get(page, **_bearer(workspace_a)).json()["text"] == "hello"
    assert _as(vera).get(page).json()["id"] == str(post.pk)


def test_the_platform_api_needs_the_accounts_own_token(workspace_a, workspace_b):
    post = _post(workspace_a, "news", "hello")
    sandbox_account_create(workspace=workspace_b, handle="intruder")
    intruder = SandboxAccount.objects.get(handle="intruder")
    as_intruder = {"HTTP_AUTHORIZATION": f"Bearer {intruder.access_token}"}
    assert Client().get("/sandbox/api/v1/posts").status_code == 401
    assert Client().get(f"/sandbox/api/v1/posts/{post.pk}").status_code == 401
    # Another account's token sees only its own posts.
    assert Client().get(f"/sandbox/api/v1/posts/{post.pk}", **as_intruder).status_code == 404
    assert Client().get("/sandbox/api/v1/posts", **as_intruder).json()["posts"] == []
    # A workspace API token is not a sandbox platform token.
    response = Client().get("/sandbox/api/v1/posts", **_bearer(workspace_a))
    assert response.status_code == 401

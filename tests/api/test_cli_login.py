"""`socialpost login` confirmed in the browser: the command starts a login, a signed-in
person confirms its code for a workspace and scopes their role allows, and the command's
next poll receives a token of theirs marked as the command line's, once."""

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.models import ApiToken, CliLogin
from tests.api.helpers import bearer, error

pytestmark = pytest.mark.django_db

START = "/api/v1/cli/login"
COLLECT = "/api/v1/cli/login/token"
CONFIRM = "/cli/login/"


def _start(client_name="laptop") -> dict:
    response = APIClient().post(START, {"client_name": client_name}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _collect(started: dict):
    return APIClient().post(COLLECT, {"device_code": started["device_code"]}, format="json")


def _as(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _confirm(user, workspace, code, scopes=("read", "write", "publish")):
    return _as(user).post(
        CONFIRM, {"code": code, "workspace": workspace.pk, "scopes": list(scopes)}
    )


def test_the_whole_login(workspace_a, bob):
    started = _start()
    assert started["verification_url_complete"].endswith(f"/cli/login/?code={started['user_code']}")
    assert CliLogin.objects.get().device_code_hash != started["device_code"]  # hashed

    pending = _collect(started)
    assert pending.status_code == 409 and error(pending)["code"] == "AUTHORIZATION_PENDING"

    page = _as(bob).get(f"{CONFIRM}?code={started['user_code']}").content.decode()
    assert started["user_code"] in page
    confirmed = _confirm(bob, workspace_a, started["user_code"].lower().replace("-", " "))
    assert confirmed.status_code == 200
    assert 'id="cli-login-confirmed"' in confirmed.content.decode()

    collected = _collect(started)
    assert collected.status_code == 201, collected.content
    body = collected.json()
    assert body["client"] == "cli" and body["name"] == "CLI on laptop"
    assert body["scopes"] == ["read", "write", "publish"]
    token = ApiToken.objects.get(pk=body["id"])
    assert (token.created_by, token.workspace, token.client) == (bob, workspace_a, "cli")
    assert bearer(body["token"]).get("/api/v1/me").status_code == 200

    again = _collect(started)
    assert again.status_code == 409 and error(again)["code"] == "CLI_LOGIN_USED"


def test_the_tokens_page_lists_it_as_the_command_lines_and_revokes_it(workspace_a, alice):
    started = _start()
    _confirm(alice, workspace_a, started["user_code"])
    body = _collect(started).json()

    page = _as(alice).get("/w/ws-a/tokens/").content.decode()
    assert "CLI on laptop" in page and "command line</span>" in page
    _as(alice).post(f"/w/ws-a/tokens/{body['id']}/revoke/")
    assert error(bearer(body["token"]).get("/api/v1/me"))["code"] == "INVALID_TOKEN"


def test_no_one_grants_more_than_their_role(workspace_a, vera):
    started = _start()

    refused = _confirm(vera, workspace_a, started["user_code"], scopes=["read", "write"])

    assert refused.status_code == 400
    assert "cannot grant write" in refused.content.decode()
    assert error(_collect(started))["code"] == "AUTHORIZATION_PENDING"


def test_a_workspace_of_someone_else_cannot_be_chosen(workspace_a, workspace_b, charlie):
    started = _start()

    refused = _confirm(charlie, workspace_a, started["user_code"])

    assert refused.status_code == 400
    assert error(_collect(started))["code"] == "AUTHORIZATION_PENDING"


def test_a_wrong_code_and_an_expired_login_are_refused(workspace_a, bob):
    started = _start()
    assert (
        "No login waits for this code" in _confirm(bob, workspace_a, "BCDF-GHJK").content.decode()
    )

    with time_machine.travel(timezone.now() + timedelta(minutes=11)):
        assert "No login waits" in _confirm(bob, workspace_a, started["user_code"]).content.decode()
        expired = _collect(started)
    assert expired.status_code == 410 and error(expired)["code"] == "CLI_LOGIN_EXPIRED"
    unknown = APIClient().post(COLLECT, {"device_code": "nope"}, format="json")
    assert unknown.status_code == 404 and error(unknown)["code"] == "CLI_LOGIN_UNKNOWN"


def test_the_confirm_page_needs_a_signed_in_person(db):
    response = Client().get(f"{CONFIRM}?code=BCDF-GHJK")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_starts_are_limited_per_address(db, monkeypatch):
    from apps.api.views import tokens

    monkeypatch.setattr(tokens, "CLI_LOGIN_STARTS_PER_HOUR", 2)
    answers = [APIClient().post(START, {}, format="json").status_code for _ in range(3)]
    assert answers == [201, 201, 429]

import pytest

from apps.accounts import services
from apps.accounts.models import SocialAccount
from apps.common.errors import ValidationFailed
from apps.sandbox.models import SandboxAccount
from apps.sandbox.services import sandbox_account_create
from tests.api.helpers import error
from tests.factories import RenditionFactory, SocialAccountFactory

URL = "/api/v1/accounts"


def test_it_lists_the_workspaces_accounts(api_a, sandbox_a, sandbox_a2, account_b):
    response = api_a.get(URL)

    assert response.status_code == 200
    assert [a["id"] for a in response.json()["results"]] == [sandbox_a2.pk, sandbox_a.pk]
    shown = response.json()["results"][0]
    assert set(shown) == {
        "id",
        "platform",
        "handle",
        "display_name",
        "status",
        "token_expires_at",
        "settings",
        "created_at",
        "updated_at",
    }


def test_it_shows_one_account(api_a, sandbox_a):
    response = api_a.get(f"{URL}/{sandbox_a.pk}")
    assert response.status_code == 200
    assert response.json()["handle"] == "sandy"


def test_it_opens_a_sandbox_account_with_its_behaviour(api_a, workspace_a):
    response = api_a.post(
        URL,
        {
            "platform": "sandbox",
            "handle": "acme-news",
            "behaviour": {"rate_limit_times": 2, "retry_after_s": 3, "text_limit": 280},
        },
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["platform"] == "sandbox"
    assert body["status"] == "connected"
    assert body["settings"]["text_limit"] == 280
    account = SocialAccount.objects.get(pk=body["id"])
    assert account.workspace == workspace_a
    assert services.social_account_credentials(account)["access_token"]
    remote = SandboxAccount.objects.get(handle="acme-news")
    assert remote.behaviour["rate_limit_times"] == 2


def test_other_platforms_are_connected_in_the_web_app(api_a):
    response = api_a.post(URL, {"platform": "mastodon", "handle": "me"})
    assert response.status_code == 400
    assert "web app" in error(response)["details"]["platform"][0]


def test_an_unknown_behaviour_key_is_named(api_a):
    response = api_a.post(URL, {"platform": "sandbox", "handle": "x1", "behaviour": {"fly": 1}})
    assert response.status_code == 400
    assert error(response)["code"] == "UNKNOWN_FIELD"
    assert list(error(response)["details"]) == ["behaviour.fly"]


def test_a_taken_handle_is_409(api_a):
    assert api_a.post(URL, {"platform": "sandbox", "handle": "dup"}).status_code == 201
    response = api_a.post(URL, {"platform": "sandbox", "handle": "dup"})
    assert response.status_code == 409
    assert error(response)["code"] == "HANDLE_TAKEN"


def test_the_sandbox_can_be_switched_off(api_a, settings):
    settings.SANDBOX_ENABLED = False
    response = api_a.post(URL, {"platform": "sandbox", "handle": "off"})
    assert response.status_code == 404
    assert error(response)["code"] == "SANDBOX_DISABLED"


def _connected(workspace, handle: str = "leaving") -> SocialAccount:
    return services.social_account_connect(
        workspace=workspace,
        platform="sandbox",
        remote_id=f"r-{handle}",
        handle=handle,
        credentials={"access_token": "secret"},
    )


def test_disconnecting_an_account_with_history_disables_it_and_erases_credentials(
    api_a, workspace_a
):
    account = _connected(workspace_a)
    RenditionFactory(publication__workspace=workspace_a, social_account=account)

    response = api_a.delete(f"{URL}/{account.pk}")

    assert response.status_code == 200
    assert response.json()["status"] == "disabled"
    account.refresh_from_db()
    assert account.status == SocialAccount.Status.DISABLED
    assert not account.credentials_ciphertext
    assert services.social_account_credentials(account) == {}
    assert api_a.get(f"{URL}/{account.pk}").json()["status"] == "disabled"


def test_disconnecting_an_unused_account_removes_it(api_a, workspace_a):
    account = _connected(workspace_a)

    response = api_a.delete(f"{URL}/{account.pk}")

    assert response.status_code == 204
    assert not response.content
    assert not SocialAccount.objects.filter(pk=account.pk).exists()
    assert api_a.get(f"{URL}/{account.pk}").status_code == 404


def test_disconnecting_needs_the_write_scope(client_with, workspace_a):
    account = _connected(workspace_a)
    client = client_with("read")

    response = client.delete(f"{URL}/{account.pk}")

    assert response.status_code == 403
    assert error(response)["code"] == "INSUFFICIENT_SCOPE"
    assert SocialAccount.objects.filter(pk=account.pk).exists()


def test_a_disconnected_account_cannot_be_scheduled_to(api_a, workspace_a):
    account = SocialAccountFactory(workspace=workspace_a, status="disabled")
    response = api_a.post(
        "/api/v1/publications",
        {"text": "Hi", "destinations": [{"account": account.pk}], "status": "scheduled"},
    )
    assert response.status_code == 400
    assert "destinations.0.account" in error(response)["details"]


def test_a_null_behaviour_time_with_a_default_is_refused_in_the_envelope(api_a):
    # processing_s defaults to 0; null is no time at all (only hang_s reads null as "default").
    response = api_a.post(
        URL,
        {"platform": "sandbox", "handle": "nul", "behaviour": {"processing_s": None}},
        format="json",
    )
    assert response.status_code == 400
    assert error(response)["code"] == "VALIDATION_ERROR"
    assert list(error(response)["details"]) == ["behaviour.processing_s"]


def test_a_null_hang_means_the_default_hang(api_a):
    response = api_a.post(
        URL,
        {"platform": "sandbox", "handle": "hangs", "behaviour": {"hang_s": None}},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert SandboxAccount.objects.get(handle="hangs").behaviour["hang_s"] is None


def test_the_service_refuses_a_null_where_the_behaviour_has_a_default(workspace_a):
    with pytest.raises(ValidationFailed) as refused:
        sandbox_account_create(
            workspace=workspace_a, handle="svc", behaviour={"retry_after_s": None}
        )
    assert list(refused.value.details) == ["behaviour.retry_after_s"]

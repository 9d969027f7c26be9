"""Abuse bounds of the sandbox: time behaviours, accounts per workspace, uploads. Each
test tries the abuse and finds it refused with a clear message, nothing else lost."""

import httpx
import pytest
from django.test import Client

from apps.accounts import services as account_services
from apps.accounts.models import SocialAccount
from apps.sandbox.behaviour import held_seconds
from apps.sandbox.models import SandboxAccount, SandboxMedia
from apps.sandbox.services import sandbox_account_create

ACCOUNTS = "/api/v1/accounts"


def _open(api, handle, **behaviour):
    return api.post(
        ACCOUNTS, {"platform": "sandbox", "handle": handle, "behaviour": behaviour}, format="json"
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("behaviour", "field"),
    [
        ({"latency_ms": 2**31 - 1}, "behaviour.latency_ms"),
        ({"hang_after_accept_times": 1, "hang_s": 86_400}, "behaviour.hang_s"),
        ({"latency_ms": 6000, "hang_s": 5}, "behaviour.hang_s"),
        ({"retry_after_s": 10**6}, "behaviour.retry_after_s"),
        ({"processing_s": 7200}, "behaviour.processing_s"),
    ],
)
def test_the_api_refuses_time_behaviours_past_their_bounds(api_a, workspace_a, behaviour, field):
    response = _open(api_a, "sleepy", **behaviour)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in error["details"]
    assert " s" in error["details"][field][0] or " ms" in error["details"][field][0]
    assert not SandboxAccount.objects.exists()
    assert not SocialAccount.objects.exists()


@pytest.mark.django_db
def test_time_behaviours_within_the_bound_are_accepted(api_a, workspace_a):
    response = _open(api_a, "patient", latency_ms=4000, hang_after_accept_times=1, hang_s=6)
    assert response.status_code == 201, response.json()


@pytest.mark.django_db
def test_the_web_form_refuses_a_latency_past_the_bound(alice, workspace_a):
    client = Client()
    client.force_login(alice)
    response = client.post(
        "/w/ws-a/accounts/sandbox/", {"handle": "sleepy", "latency_ms": "2147483647"}
    )
    assert response.status_code == 400
    assert "At most 10000 ms." in response.content.decode()
    assert not SandboxAccount.objects.exists()


def test_an_answer_is_never_held_past_the_bound(settings):
    """Accounts stored before the bound (or under a larger one) are held no longer."""
    settings.SANDBOX_MAX_DELAY_S = 10
    settings.PROVIDER_TIMEOUT_S = 30
    assert held_seconds({"latency_ms": 2**31 - 1}, hang=False) == (10, 0)
    assert held_seconds({"latency_ms": 4000, "hang_s": 10**9}, hang=True) == (4, 6)
    assert held_seconds({"latency_ms": 0}, hang=True) == (0, 10)  # default hang, bounded


@pytest.mark.django_db
def test_sandbox_accounts_per_workspace_are_capped(api_a, api_b, settings, workspace_a):
    settings.SANDBOX_ACCOUNTS_PER_WORKSPACE = 2
    assert _open(api_a, "one").status_code == 201
    assert _open(api_a, "two").status_code == 201
    response = _open(api_a, "three")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "SANDBOX_ACCOUNT_LIMIT"
    assert "(2)" in error["message"]
    assert error["details"] == {"limit": 2, "held": 2}
    assert sorted(SandboxAccount.objects.values_list("handle", flat=True)) == ["one", "two"]
    assert _open(api_b, "three").status_code == 201  # another workspace has its own cap


@pytest.mark.django_db
def test_the_web_form_shows_the_account_cap(alice, workspace_a, settings):
    settings.SANDBOX_ACCOUNTS_PER_WORKSPACE = 1
    sandbox_account_create(workspace=workspace_a, handle="first")
    client = Client()
    client.force_login(alice)
    response = client.post("/w/ws-a/accounts/sandbox/", {"handle": "second"})
    assert response.status_code == 400
    assert "the most it may have (1)" in response.content.decode()
    assert list(SandboxAccount.objects.values_list("handle", flat=True)) == ["first"]


@pytest.fixture
def uploader(live_server, settings, workspace_a):
    settings.SANDBOX_BASE_URL = live_server.url
    account = sandbox_account_create(workspace=workspace_a, handle="uploads")
    token = account_services.social_account_credentials(account)["access_token"]

    def upload(data: bytes):
        return httpx.post(
            f"{live_server.url}/sandbox/api/v1/media",
            headers={"Authorization": f"Bearer {token}"},
            files={"file": ("m.png", data, "image/png")},
        )

    return upload


@pytest.mark.django_db(transaction=True)
def test_an_upload_over_the_file_cap_is_refused(uploader, settings):
    settings.SANDBOX_MEDIA_MAX_BYTES = 10
    response = uploader(b"x" * 11)
    assert response.status_code == 413
    assert response.json()["error"] == "media_too_large"
    assert "at most 10 bytes" in response.json()["message"]
    big = uploader(b"x" * 200_000)  # refused from its Content-Length, before it is read
    assert big.status_code == 413
    assert not SandboxMedia.objects.exists()
    assert uploader(b"x" * 10).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_uploads_per_account_are_capped_in_count_and_bytes(uploader, settings):
    settings.SANDBOX_MEDIA_PER_ACCOUNT = 2
    settings.SANDBOX_MEDIA_BYTES_PER_ACCOUNT = 25
    assert uploader(b"x" * 10).status_code == 200
    over_bytes = uploader(b"x" * 16)
    assert over_bytes.status_code == 413
    assert over_bytes.json()["error"] == "media_limit_reached"
    assert uploader(b"x" * 15).status_code == 200
    over_count = uploader(b"x")
    assert over_count.status_code == 413
    assert "the most a sandbox account may (2)" in over_count.json()["message"]
    assert sorted(SandboxMedia.objects.values_list("size_bytes", flat=True)) == [10, 15]

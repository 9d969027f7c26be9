"""The sandbox's read side, through Django's test client: counts that grow with age."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts import services as account_services
from apps.sandbox.metrics import post_metrics
from apps.sandbox.models import SandboxAccount, SandboxPost
from apps.sandbox.services import sandbox_account_create

pytestmark = pytest.mark.django_db


def _auth(account) -> dict:
    token = account_services.social_account_credentials(account)["access_token"]
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def test_a_post_metrics_grow_over_time(client, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="grow")
    remote = SandboxAccount.objects.get(handle="grow")
    post = SandboxPost.objects.create(account=remote, text="hi")
    later = post_metrics(post, post.created_at + timedelta(days=2))
    sooner = post_metrics(post, post.created_at + timedelta(hours=1))
    assert all(later[name] >= sooner[name] for name in later)
    assert later["views"] > sooner["views"] > 0
    answer = client.get(f"/sandbox/api/v1/posts/{post.pk}/metrics", **_auth(account))
    assert answer.status_code == 200
    assert set(answer.json()) == {"id", "likes", "replies", "reposts", "views"}
    me = client.get("/sandbox/api/v1/me", **_auth(account))
    assert me.json()["followers_count"] >= 100


def test_reads_share_the_status_429(client, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a,
        handle="limited",
        behaviour={"status_rate_limit_times": 1, "retry_after_s": 9},
    )
    remote = SandboxAccount.objects.get(handle="limited")
    post = SandboxPost.objects.create(account=remote, text="hi", created_at=timezone.now())
    first = client.get(f"/sandbox/api/v1/posts/{post.pk}/metrics", **_auth(account))
    assert first.status_code == 429 and first["Retry-After"] == "9"
    assert (
        client.get(f"/sandbox/api/v1/posts/{post.pk}/metrics", **_auth(account)).status_code == 200
    )

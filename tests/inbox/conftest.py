"""The inbox's tests talk to the sandbox over its real views, without a live server: the
sandbox adapter's HTTP requests are routed into Django's test client (same database
transaction, so the tests stay fast)."""

from __future__ import annotations

import httpx
import pytest
import respx
from django.test import Client
from django.utils import timezone

from apps.jobs.worker import Worker
from apps.renditions.models import Rendition
from apps.sandbox.models import SandboxAccount, SandboxPost
from apps.sandbox.services import sandbox_account_create
from tests.factories import RenditionFactory

SANDBOX_HOST = "sandbox.inbox.test"


@pytest.fixture
def sandbox_http(settings):
    settings.SANDBOX_BASE_URL = f"http://{SANDBOX_HOST}"
    django_client = Client()
    calls: list[tuple[str, str]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append((request.method, request.url.path))
        headers = {
            "HTTP_" + name.upper().replace("-", "_"): value
            for name, value in request.headers.items()
            if name.lower() not in ("content-type", "content-length", "host")
        }
        answer = django_client.generic(
            request.method,
            request.url.raw_path.decode(),
            data=request.content,
            content_type=request.headers.get("content-type", ""),
            **headers,
        )
        return httpx.Response(
            answer.status_code, content=answer.content, headers=dict(answer.items())
        )

    with respx.mock(assert_all_called=False) as mock:
        mock.route(host=SANDBOX_HOST).mock(side_effect=handle)
        yield calls


@pytest.fixture
def worker(db):
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="inbox-worker")


def run_due(worker: Worker) -> int:
    jobs = worker.claim_batch()
    for job in jobs:
        worker.run_one(job)
    return len(jobs)


def live_post(workspace, handle: str = "baker", **behaviour) -> tuple[Rendition, SandboxPost]:
    """A sandbox account with one post, and its published rendition."""
    account = sandbox_account_create(workspace=workspace, handle=handle, behaviour=behaviour)
    remote = SandboxAccount.objects.get(pk=account.remote_id)
    post = SandboxPost.objects.create(account=remote, text="New bread today")
    rendition = RenditionFactory(
        publication__workspace=workspace,
        social_account=account,
        status=Rendition.Status.PUBLISHED,
        provider_post_id=str(post.pk),
        published_at=timezone.now(),
    )
    return rendition, post


def misbehave(handle: str, **counters) -> None:
    SandboxAccount.objects.filter(handle=handle).update(counters=counters)

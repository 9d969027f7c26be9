"""A thread whose first segment waited on the platform (a Threads container) goes on from
its status poll; when the next segment's request is refused for a while (a 500), the
rendition fails with a retry pending. That retry is the publish job's: the poll job's own
rerun finds the rendition failed and does nothing, so without a publish job the retry
would wait for the due sweep (and past the sweep's minute nothing else moves it). The
platform holds each segment once."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
import respx
from django.utils import timezone

from apps.common.db_clock import db_now
from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.publishing.delivery.enqueue import enqueue_poll, publish_dedupe_key
from apps.renditions.models import Rendition
from tests.factories import PublicationFactory, RenditionFactory, RenditionSegmentFactory
from tests.providers.social_helpers import go_offline, make_account

pytestmark = pytest.mark.django_db(transaction=True)

G = "https://graph.threads.net/v1.0"
USER = "1001"


class Threads:
    """Threads' containers as far as a text thread goes: created, FINISHED at once,
    published; the next container create answered 500 `refusals` times first."""

    def __init__(self, router: respx.MockRouter) -> None:
        self.containers: list[dict] = []
        self.posts: list[str] = []  # the containers published, in order
        self.refusals = 0
        router.post(f"{G}/{USER}/threads").mock(side_effect=self._create)
        router.post(f"{G}/{USER}/threads_publish").mock(side_effect=self._publish)
        router.get(url__regex=rf"^{G}/C\d+").mock(
            side_effect=lambda request: httpx.Response(
                200, json={"status": "FINISHED", "id": request.url.path.rsplit("/", 1)[-1]}
            )
        )
        router.get(url__regex=rf"^{G}/M\d+").mock(
            side_effect=lambda request: httpx.Response(
                200, json={"permalink": "https://www.threads.net/@alice/post/x", "id": "M"}
            )
        )

    def _create(self, request: httpx.Request) -> httpx.Response:
        if self.refusals:
            self.refusals -= 1
            error = {"message": "Service temporarily unavailable", "code": 2, "type": "x"}
            return httpx.Response(500, json={"error": error})
        self.containers.append({"id": f"C{len(self.containers) + 1}"})
        return httpx.Response(200, json={"id": self.containers[-1]["id"]})

    def _publish(self, request: httpx.Request) -> httpx.Response:
        creation_id = request.content.decode().split("creation_id=")[1].split("&")[0]
        self.posts.append(creation_id)
        return httpx.Response(200, json={"id": f"M{len(self.posts)}"})


@pytest.fixture
def threads(monkeypatch, settings):
    settings.META_APP_ID = "meta-app"
    settings.META_APP_SECRET = "meta-secret"
    settings.THREADS_APP_ID = "threads-app"
    settings.THREADS_APP_SECRET = "threads-secret"
    settings.RECONCILE_DELAY_S = 0
    go_offline(monkeypatch)
    with respx.mock(assert_all_called=False) as router:
        yield Threads(router)


@pytest.fixture
def worker(db):
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="test-worker")


def _waiting_thread(workspace, threads: Threads) -> Rendition:
    """A two-segment thread whose first container Threads accepted: waiting on its poll."""
    account = make_account(
        workspace,
        "threads",
        remote_id=USER,
        handle="alice",
        credentials={"access_token": "LONG-TOKEN"},
        token_expires_at=timezone.now() + timedelta(days=30),
    )
    threads.containers.append({"id": "C1"})
    now = db_now()
    accepted = {"position": 0, "pending_id": "C1", "accepted_at": now.isoformat()}
    container = {"id": "C1", "text": "a thought", "created_at": now.isoformat()}
    rendition = RenditionFactory(
        publication=PublicationFactory(workspace=workspace, status="publishing"),
        social_account=account,
        status=Rendition.Status.WAITING,
        checkpoint={"pending": accepted, "containers": {"0": {**container, "reply_to_id": None}}},
    )
    RenditionSegmentFactory(rendition=rendition, position=0, text="a thought")
    RenditionSegmentFactory(rendition=rendition, position=1, text="and a follow-up")
    enqueue_poll(rendition, {**accepted, "polls": 0, "poll_errors": 0}, 0.0)
    return rendition


def _run_due(worker: Worker) -> list[Job]:
    jobs = worker.claim_batch()
    for job in jobs:
        worker.run_one(job)
    return jobs


def _drain(worker: Worker, rounds: int = 20) -> None:
    """Run every unfinished job, each made due now with its rendition's retry (time
    travel); no sweep runs."""
    for _ in range(rounds):
        Rendition.objects.filter(next_retry_at__isnull=False).update(next_retry_at=db_now())
        Job.objects.filter(status__in=["pending", "waiting"]).update(run_at=timezone.now())
        worker.promote_waiting()
        if not _run_due(worker) and not Job.objects.unfinished().exists():
            return


def test_a_refused_next_segment_after_a_poll_is_retried_by_a_publish_job(
    threads, worker, workspace_a
):
    rendition = _waiting_thread(workspace_a, threads)
    threads.refusals = 1

    _run_due(worker)  # the poll: the first segment published, the second refused

    rendition.refresh_from_db()
    assert threads.posts == ["C1"]
    assert rendition.is_retry_pending, (rendition.status, rendition.last_error)
    assert rendition.last_error["kind"] == "provider_unavailable"
    # The retry has its job, due when the rendition says.
    retry = Job.objects.unfinished().get(dedupe_key=publish_dedupe_key(rendition.pk))
    assert retry.run_at == rendition.next_retry_at
    assert list(Job.objects.unfinished().values_list("dedupe_key", flat=True)) == [retry.dedupe_key]

    _drain(worker)

    rendition.refresh_from_db()
    assert rendition.status == Rendition.Status.PUBLISHED
    assert threads.posts == ["C1", "C2"]  # each segment once
    posts = rendition.segments.order_by("position").values_list("provider_post_id", flat=True)
    assert list(posts) == ["M1", "M2"]

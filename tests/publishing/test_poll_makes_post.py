"""A status poll that makes the post (Pinterest's Pin, created once its video is processed)
and stops after the platform made it: the database goes away before the answer is written.
The next run looks the post up before anything is sent again; the platform holds one Pin."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
import respx
from django.db import connection
from django.utils import timezone

from apps.common.db_clock import db_now
from apps.jobs.errors import DATABASE_ERROR
from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.providers.base import get_adapter
from apps.publishing.delivery import poll, stranded
from apps.publishing.delivery.enqueue import enqueue_poll, poll_dedupe_key
from apps.renditions.models import DeliveryAttempt, Rendition
from tests.factories import PublicationFactory, RenditionFactory, RenditionSegmentFactory
from tests.providers.social_helpers import go_offline, make_account

pytestmark = pytest.mark.django_db(transaction=True)

A = DeliveryAttempt
API = "https://api.pinterest.com/v5"
BOARD = "549755885175"
MEDIA_ID = "5110000001"
TEXT = "Dark and dense"


@pytest.fixture
def worker(db, settings):
    settings.RECONCILE_DELAY_S = 0
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="test-worker")


class Pinterest:
    """Pinterest's API as far as a video Pin goes: the processed video, the Pins made,
    the board listing them."""

    def __init__(self, router: respx.MockRouter) -> None:
        self.pins: list[dict] = []
        self.video_status = "succeeded"
        router.get(f"{API}/media/{MEDIA_ID}").mock(
            side_effect=lambda request: httpx.Response(200, json={"status": self.video_status})
        )
        router.post(f"{API}/pins").mock(side_effect=self._create)
        router.get(f"{API}/boards/{BOARD}/pins").mock(side_effect=self._board)

    def _create(self, request: httpx.Request) -> httpx.Response:
        pin = {
            "id": str(813744226420795884 + len(self.pins)),
            "created_at": timezone.now().replace(tzinfo=None).isoformat(timespec="seconds"),
            "board_id": BOARD,
            "title": "Rye loaf",
            "description": TEXT,
            "link": "",
        }
        self.pins.append(pin)
        return httpx.Response(201, json=pin)

    def _board(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"items": list(reversed(self.pins)), "bookmark": None})


@pytest.fixture
def pinterest(monkeypatch, settings):
    settings.PINTEREST_APP_ID = "pin-app"
    settings.PINTEREST_APP_SECRET = "pin-secret"
    go_offline(monkeypatch)
    with respx.mock(assert_all_called=False) as router:
        yield Pinterest(router)


def _waiting_video_pin(workspace) -> Rendition:
    """A video Pin whose video Pinterest accepted: the rendition waits on its status poll."""
    account = make_account(
        workspace,
        "pinterest",
        remote_id="u1",
        handle="bakery",
        credentials={"access_token": "pina_TOKEN", "refresh_token": "pinr_TOKEN"},
        token_expires_at=timezone.now() + timedelta(days=30),
    )
    accepted = {"position": 0, "pending_id": MEDIA_ID, "accepted_at": db_now().isoformat()}
    pin = {
        "board_id": BOARD,
        "description": TEXT,
        "title": "Rye loaf",
        "media_source": {"source_type": "video_id", "media_id": MEDIA_ID},
    }
    rendition = RenditionFactory(
        publication=PublicationFactory(workspace=workspace, status="publishing"),
        social_account=account,
        status=Rendition.Status.WAITING,
        settings={"board_id": BOARD, "title": "Rye loaf"},
        checkpoint={"pending": accepted, "video_media_id": MEDIA_ID, "video_pin": pin},
    )
    RenditionSegmentFactory(rendition=rendition, position=0, text=TEXT)
    enqueue_poll(rendition, {**accepted, "polls": 0}, 0.0)
    return rendition


def _kill_own_connection(*args, **kwargs) -> None:
    """The database restarts under the run (its connection is terminated)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")


def _run_due(worker: Worker) -> list[Job]:
    jobs = worker.claim_batch()
    for job in jobs:
        worker.run_one(job)
    return jobs


def _drain(worker: Worker, rounds: int = 20) -> None:
    for _ in range(rounds):
        if not _run_due(worker) and not Job.objects.unfinished().exists():
            return
        Job.objects.unfinished().filter(status="pending").update(run_at=timezone.now())


def test_a_poll_stopped_after_the_pin_was_made_is_looked_up_never_pinned_again(
    pinterest, worker, workspace_a, monkeypatch
):
    rendition = _waiting_video_pin(workspace_a)
    [job] = worker.claim_batch()
    # Pinterest made the Pin; the database goes away before its answer is written.
    monkeypatch.setattr(poll, "save_checkpoint", _kill_own_connection)
    assert worker.run_one(job) == "pending"  # a database error decided nothing
    monkeypatch.undo()

    assert len(pinterest.pins) == 1
    rendition.refresh_from_db()
    assert rendition.status == Rendition.Status.WAITING
    assert rendition.delivery_attempts.get().outcome == A.Outcome.IN_FLIGHT
    recovered = Job.objects.get(pk=job.pk)
    assert (recovered.status, recovered.last_error["kind"]) == ("pending", DATABASE_ERROR)

    # The next run finds the earlier poll in flight: an ambiguous failure, looked up.
    Job.objects.filter(pk=job.pk).update(run_at=timezone.now())
    _run_due(worker)
    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == (Rendition.Status.FAILED, True)
    assert rendition.last_error["code"] == "worker_lost"
    assert len(pinterest.pins) == 1

    _drain(worker)
    rendition.refresh_from_db()
    [pin] = pinterest.pins
    assert rendition.status == Rendition.Status.PUBLISHED
    assert rendition.provider_post_id == pin["id"]
    outcomes = list(rendition.delivery_attempts.values_list("kind", "outcome"))
    assert outcomes == [(A.Kind.POLL, A.Outcome.LOST), (A.Kind.RECONCILE, A.Outcome.FOUND)]


def test_a_poll_stopped_while_the_video_was_processing_waits_for_it_then_pins_once(
    pinterest, worker, workspace_a, monkeypatch
):
    pinterest.video_status = "processing"
    rendition = _waiting_video_pin(workspace_a)
    [job] = worker.claim_batch()
    monkeypatch.setattr(poll, "save_checkpoint", _kill_own_connection)
    assert worker.run_one(job) == "pending"
    monkeypatch.undo()

    # Looked up: the video is still processing, so no Pin can exist yet: waiting resumes.
    Job.objects.filter(pk=job.pk).update(run_at=timezone.now())
    _run_due(worker)
    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == (Rendition.Status.FAILED, True)
    _run_due(worker)
    rendition.refresh_from_db()
    assert rendition.status == Rendition.Status.WAITING
    assert pinterest.pins == []

    pinterest.video_status = "succeeded"
    _drain(worker)
    rendition.refresh_from_db()
    [pin] = pinterest.pins
    assert (rendition.status, rendition.provider_post_id) == (Rendition.Status.PUBLISHED, pin["id"])


def test_a_poll_left_in_flight_found_by_the_stranded_sweep_is_looked_up_too(
    pinterest, worker, workspace_a, monkeypatch
):
    rendition = _waiting_video_pin(workspace_a)
    [job] = worker.claim_batch()
    monkeypatch.setattr(poll, "save_checkpoint", _kill_own_connection)
    worker.run_one(job)
    monkeypatch.undo()
    # The job itself ended (an operator's cancel): the sweep hands the rendition back to
    # its status poll, which must still look before polling.
    Job.objects.filter(pk=job.pk).update(status="cancelled")
    assert stranded.settle_stranded() == 1
    assert Job.objects.unfinished().filter(dedupe_key=poll_dedupe_key(rendition.pk)).exists()

    _drain(worker)
    rendition.refresh_from_db()
    [pin] = pinterest.pins
    assert (rendition.status, rendition.provider_post_id) == (Rendition.Status.PUBLISHED, pin["id"])


def test_a_poll_stopped_after_storing_the_pin_sends_nothing_again(
    pinterest, worker, workspace_a, monkeypatch
):
    rendition = _waiting_video_pin(workspace_a)
    [job] = worker.claim_batch()
    # The Pin's id is stored; the database goes away before the run moves on.
    monkeypatch.setattr(poll, "clear_accepted", _kill_own_connection)
    assert worker.run_one(job) == "pending"
    monkeypatch.undo()
    rendition.refresh_from_db()
    assert rendition.status == Rendition.Status.WAITING
    assert rendition.segments.get().provider_post_id == pinterest.pins[0]["id"]

    Job.objects.filter(pk=job.pk).update(run_at=timezone.now())
    _drain(worker)
    rendition.refresh_from_db()
    [pin] = pinterest.pins
    assert (rendition.status, rendition.provider_post_id) == (Rendition.Status.PUBLISHED, pin["id"])
    assert not rendition.delivery_attempts.filter(kind=A.Kind.RECONCILE).exists()


def test_a_poll_that_only_reads_is_read_again_after_a_run_that_stopped(
    pinterest, worker, workspace_a, monkeypatch
):
    """Where a repeat of the poll is harmless (it makes no post), the earlier poll left in
    flight is closed and the status read again."""
    monkeypatch.setattr(type(get_adapter("pinterest")), "poll_makes_post", False)
    rendition = _waiting_video_pin(workspace_a)
    A.objects.create(
        rendition=rendition,
        workspace_id=rendition.workspace_id,
        kind=A.Kind.POLL,
        segment_position=0,
        worker="gone",
    )

    _drain(worker)
    rendition.refresh_from_db()
    assert rendition.status == Rendition.Status.PUBLISHED
    outcomes = list(rendition.delivery_attempts.values_list("outcome", flat=True))
    assert outcomes == [A.Outcome.LOST, A.Outcome.PUBLISHED]

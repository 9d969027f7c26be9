"""Publishing with real `run_worker` processes: a worker SIGKILLed while its request is in
flight never causes a second post. The sandbox's store is the witness."""

import signal

import pytest
from django.utils import timezone

from apps.publishing.services import publication_create
from apps.renditions.models import Rendition
from apps.sandbox.services import sandbox_account_create
from tests.processes import WorkerProcess, wait_until
from tests.sandbox.witness import witness_posts

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TYPES = "renditions.publish,renditions.reconcile"


@pytest.fixture
def start_worker(tmp_path):
    started: list[WorkerProcess] = []

    def start(name: str, *args: str, **env: str) -> WorkerProcess:
        started.append(WorkerProcess(tmp_path, name, *args, **env))
        return started[-1]

    yield start
    for worker in started:
        worker.kill()


def _posts(base_url: str, handle: str) -> list[dict]:
    return witness_posts(base_url, handle)


@pytest.mark.parametrize("honours_key", [True, False])
def test_a_worker_killed_mid_publish_never_causes_a_second_post(
    live_server, settings, start_worker, workspace_a, honours_key
):
    settings.SANDBOX_BASE_URL = live_server.url
    settings.SANDBOX_MAX_DELAY_S = 30  # this test's hang outlasts the production bound
    handle = f"killed-{honours_key}"
    account = sandbox_account_create(
        workspace=workspace_a,
        handle=handle,
        # The sandbox stores the post, then holds the answer long past the kill.
        behaviour={
            "hang_after_accept_times": 1,
            "hang_s": 30,
            "honours_idempotency_key": honours_key,
        },
    )
    env = {
        "SANDBOX_BASE_URL": live_server.url,
        "PROVIDER_TIMEOUT_S": "60",
        "WORKER_HEARTBEAT_S": "0.5",
        "WORKER_STALE_AFTER_S": "2",
        "RECONCILE_DELAY_S": "0",
    }
    doomed = start_worker("doomed", "--types", TYPES, **env)
    publication = publication_create(
        workspace=workspace_a,
        author=None,
        segments=[{"text": "exactly once"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    rendition = publication.renditions.get()
    wait_until(
        lambda: len(_posts(live_server.url, handle)) == 1,
        30,
        f"the post to be stored ({doomed.output()[-3000:]})",
    )
    assert doomed.stop(signal.SIGKILL) == -signal.SIGKILL

    survivor = start_worker("survivor", "--types", TYPES, **env)
    wait_until(
        lambda: Rendition.objects.get(pk=rendition.pk).status == "published",
        45,
        f"the rendition to be settled ({survivor.output()[-2000:]})",
    )
    assert survivor.stop() == 0

    rendition.refresh_from_db()
    posts = _posts(live_server.url, handle)
    assert len(posts) == 1
    assert rendition.provider_post_id == posts[0]["id"]
    outcomes = list(rendition.delivery_attempts.values_list("kind", "outcome"))
    assert outcomes == [("publish", "lost"), ("reconcile", "found")]

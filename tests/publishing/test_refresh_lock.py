"""A token refresh is serialized per account by its refresh lock, never by the account's
row lock: the platform's answer can take the whole provider timeout, and nothing else that
writes the account may wait on it meanwhile."""

import threading
from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.accounts.services import social_account_credentials
from apps.jobs.models import Job
from apps.providers.sandbox.adapter import SandboxAdapter
from apps.publishing.delivery import context as context_module
from apps.publishing.delivery.context import publish_context
from apps.publishing.delivery.publish import _refresh_credentials
from apps.publishing.delivery.run import Run
from apps.publishing.locks import ACCOUNT_REFRESH_LOCK, RefreshInProgress, account_refresh_lock
from apps.sandbox.services import sandbox_account_create
from tests.renditions.test_pipeline import advance_retry, drain, publish_now, run_due
from tests.sandbox.witness import witness_posts

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sandbox(live_server, settings):
    settings.SANDBOX_BASE_URL = live_server.url
    settings.PROVIDER_TIMEOUT_S = 15
    settings.RECONCILE_DELAY_S = 0
    return live_server.url


@pytest.fixture
def worker(db):
    from apps.jobs.worker import Worker

    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="test-worker")


def _other_session() -> psycopg.Connection:
    """A second database session, as another process would have."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    return psycopg.connect(**params, autocommit=True)


def _stale(account: SocialAccount) -> None:
    SocialAccount.objects.filter(pk=account.pk).update(
        token_expires_at=timezone.now() + timedelta(seconds=30)
    )
    account.refresh_from_db()


def _run_for(account: SocialAccount, adapter) -> Run:
    rendition = publish_now(account.workspace, [account]).renditions.get()
    job = Job.objects.filter(payload__rendition_id=rendition.pk).get()
    credentials = social_account_credentials(account)
    return Run(
        job=job, rendition=rendition, adapter=adapter, ctx=publish_context(rendition, credentials)
    )


class WatchedRefresh(SandboxAdapter):
    """The sandbox's refresh, slowed, noting what another session can do meanwhile."""

    def __init__(self, pause_s: float = 0.0) -> None:
        self.pause_s = pause_s
        self.requests = 0
        self.row_lockable_meanwhile: list[bool] = []
        self._count = threading.Lock()

    def refresh_credentials(self, account, credentials):
        expires = account.token_expires_at
        if expires is not None and expires - timezone.now() > timedelta(minutes=5):
            return None
        with self._count:
            self.requests += 1
        with _other_session() as other:
            try:
                other.execute(
                    "SELECT 1 FROM accounts_socialaccount WHERE id = %s FOR UPDATE NOWAIT",
                    [account.pk],
                )
                self.row_lockable_meanwhile.append(True)
            except psycopg.errors.LockNotAvailable:
                self.row_lockable_meanwhile.append(False)
        threading.Event().wait(self.pause_s)
        return super().refresh_credentials(account, credentials)


def test_the_account_row_is_free_while_the_platform_answers(sandbox, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="free-row")
    _stale(account)
    adapter = WatchedRefresh()
    run = _run_for(account, adapter)
    spent = run.ctx.credentials["refresh_token"]

    _refresh_credentials(run)

    assert adapter.requests == 1
    assert adapter.row_lockable_meanwhile == [True]
    account.refresh_from_db()
    stored = social_account_credentials(account)
    assert stored["refresh_token"] != spent
    assert run.ctx.credentials == stored  # the run goes on with the new token


def test_two_workers_refreshing_at_once_spend_the_refresh_token_once(sandbox, workspace_a):
    """The sandbox rotates the refresh token: a second refresh with the spent one would be
    refused (invalid_grant) and the account marked for reconnecting."""
    account = sandbox_account_create(workspace=workspace_a, handle="racing")
    _stale(account)
    adapter = WatchedRefresh(pause_s=0.5)
    runs = [_run_for(account, adapter) for _ in range(2)]
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def refresh(run: Run) -> None:
        try:
            start.wait()
            _refresh_credentials(run)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=refresh, args=(run,)) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert errors == []
    assert adapter.requests == 1  # the second worker found the token fresh
    account.refresh_from_db()
    assert account.status == SocialAccount.Status.CONNECTED
    stored = social_account_credentials(account)
    assert [run.ctx.credentials for run in runs] == [stored, stored]


def test_the_refresh_lock_is_released_when_its_session_ends(sandbox, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="killed")
    with _other_session() as other:
        other.execute("SELECT pg_advisory_lock(%s, %s)", [ACCOUNT_REFRESH_LOCK, account.pk])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '200ms'")
        with pytest.raises(RefreshInProgress), account_refresh_lock(account.pk):
            pass
    # The holder's session ended (a worker killed mid-refresh): the lock went with it.
    with account_refresh_lock(account.pk):
        pass
    with connection.cursor() as cursor:
        cursor.execute("RESET lock_timeout")


def test_a_refresh_held_elsewhere_too_long_retries_the_post_cleanly(
    sandbox, worker, workspace_a, monkeypatch
):
    account = sandbox_account_create(workspace=workspace_a, handle="held")
    _stale(account)
    real_lock = context_module.account_refresh_lock
    busy = {"times": 1}

    def lock_once_busy(account_id):
        if busy["times"]:
            busy["times"] -= 1
            raise RefreshInProgress("lock wait timed out")
        return real_lock(account_id)

    monkeypatch.setattr(context_module, "account_refresh_lock", lock_once_busy)
    publication = publish_now(workspace_a, [account])
    run_due(worker)
    rendition = publication.renditions.get()
    assert rendition.status == "failed"
    assert rendition.last_error["code"] == "refresh_in_progress"
    assert rendition.last_error["retryable"] is True
    assert rendition.next_retry_at is not None
    assert not rendition.delivery_attempts.exists()  # nothing was sent

    advance_retry(rendition)
    publication = drain(worker, publication)
    assert publication.status == "published"
    assert rendition.delivery_attempts.count() == 1
    assert len(witness_posts(sandbox, "held")) == 1

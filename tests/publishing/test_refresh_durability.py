"""A rotated refresh token is never lost: the platform spends the old one when it issues the
new one, so the new one is committed on its own, and again should that commit fail."""

from datetime import timedelta

import httpx
import pytest
from django.db import connection, transaction
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.accounts.services import social_account_credentials
from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.providers.sandbox.adapter import SandboxAdapter
from apps.publishing.delivery.publish import prepare
from apps.sandbox.services import sandbox_account_create
from tests.renditions.test_pipeline import drain, publish_now

pytestmark = pytest.mark.django_db(transaction=True)

# PostgreSQL itself fails the first COMMIT that changed an account's credentials: a deferred
# constraint trigger raises at commit time (the sequence counts outside any transaction).
FAIL_FIRST_CREDENTIALS_COMMIT = """
CREATE SEQUENCE test_credentials_commits;
CREATE FUNCTION test_fail_first_credentials_commit() RETURNS trigger AS $$
BEGIN
    IF nextval('test_credentials_commits') = 1 THEN
        RAISE EXCEPTION 'the commit fails';
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE CONSTRAINT TRIGGER test_fail_credentials_commit
    AFTER UPDATE ON accounts_socialaccount DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.credentials_ciphertext IS DISTINCT FROM NEW.credentials_ciphertext)
    EXECUTE FUNCTION test_fail_first_credentials_commit();
"""
CLEAN_UP = """
DROP TRIGGER IF EXISTS test_fail_credentials_commit ON accounts_socialaccount;
DROP FUNCTION IF EXISTS test_fail_first_credentials_commit();
DROP SEQUENCE IF EXISTS test_credentials_commits;
"""


@pytest.fixture
def sandbox(live_server, settings):
    """The sandbox platform served by the live server. A loaded machine answers its first
    request slowly: wait for it once, and give each platform call time, so only the commit
    under test fails."""
    settings.SANDBOX_BASE_URL = live_server.url
    settings.PROVIDER_TIMEOUT_S = 15
    settings.RECONCILE_DELAY_S = 0
    httpx.get(f"{live_server.url}/sandbox/posts", timeout=60, trust_env=False)
    return live_server.url


@pytest.fixture
def worker(db):
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="test-worker")


@pytest.fixture
def fail_next_credentials_commit():
    """Call it to make the next commit that changes credentials fail."""

    def arm() -> None:
        with connection.cursor() as cursor:
            cursor.execute(FAIL_FIRST_CREDENTIALS_COMMIT)

    yield arm
    with connection.cursor() as cursor:
        cursor.execute(CLEAN_UP)
        cursor.execute("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'test_fail_%%'")
        assert cursor.fetchone()[0] == 0


def _stale(account: SocialAccount) -> None:
    SocialAccount.objects.filter(pk=account.pk).update(
        token_expires_at=timezone.now() + timedelta(seconds=30)
    )
    account.refresh_from_db()


def _refresh_token(account: SocialAccount) -> str:
    account.refresh_from_db()
    return social_account_credentials(account)["refresh_token"]


def test_a_rotated_token_survives_a_failed_commit(
    sandbox, worker, workspace_a, fail_next_credentials_commit
):
    account = sandbox_account_create(workspace=workspace_a, handle="rotating")
    spent = _refresh_token(account)
    _stale(account)
    fail_next_credentials_commit()

    publication = drain(worker, publish_now(workspace_a, [account]))

    assert publication.status == "published"
    with connection.cursor() as cursor:
        cursor.execute("SELECT last_value FROM test_credentials_commits")
        assert cursor.fetchone()[0] >= 2  # the first commit did fail
    stored = _refresh_token(account)
    assert stored != spent
    # The stored token is the platform's live one: the next refresh works with it...
    _stale(account)
    fresh = SandboxAdapter().refresh_credentials(account, social_account_credentials(account))
    assert fresh is not None and fresh["refresh_token"] != stored
    assert SocialAccount.objects.get(pk=account.pk).status == SocialAccount.Status.CONNECTED


def test_a_refresh_never_joins_a_callers_transaction(sandbox, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="nested")
    spent = _refresh_token(account)
    _stale(account)
    rendition = publish_now(workspace_a, [account]).renditions.get()
    job = Job.objects.filter(payload__rendition_id=rendition.pk).get()

    # A caller whose transaction might roll back is refused before the platform is asked,
    # so no refresh token is spent on credentials that could be lost.
    with pytest.raises(RuntimeError, match="durable"), transaction.atomic():
        prepare(job, rendition)

    assert _refresh_token(account) == spent
    fresh = SandboxAdapter().refresh_credentials(account, social_account_credentials(account))
    assert fresh is not None  # the old token was never spent

"""Emitting events: one event per occurrence, one delivery job per subscribed active
endpoint, in the caller's transaction; and the emission points in the publish pipeline,
reconciliation, resolution and the publication status."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.jobs.models import Job
from apps.publications.models import Publication
from apps.publishing.services import publication_cancel, publication_create, rendition_resolve
from apps.sandbox.services import sandbox_account_create
from apps.webhooks.constants import DELIVER_JOB, EVENT_TYPES
from apps.webhooks.endpoints import webhook_endpoint_create
from apps.webhooks.events import emit_publication_status_change
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from apps.webhooks.outbox import webhook_emit
from tests.factories import PublicationFactory, RenditionFactory, RenditionSegmentFactory
from tests.jobs.conftest import db_now
from tests.renditions.test_pipeline import publish_now, run_due


@pytest.fixture
def public_dns(fake_dns):
    fake_dns({"hooks.example.com": "93.184.215.14", "other.example.com": "93.184.215.15"})


def endpoint_for(workspace, *, url="https://hooks.example.com/in", event_types=None):
    return webhook_endpoint_create(workspace=workspace, url=url, event_types=event_types)[0]


def events(workspace, type_=None) -> list[WebhookEvent]:
    found = WebhookEvent.objects.filter(workspace=workspace).order_by("pk")
    return list(found.filter(type=type_) if type_ else found)


@pytest.mark.django_db
@pytest.mark.usefixtures("public_dns")
class TestEmit:
    def test_it_queues_one_delivery_job_per_subscribed_active_endpoint_and_holds_the_rest(
        self, workspace_a
    ):
        wants = endpoint_for(workspace_a)
        also = endpoint_for(workspace_a, url="https://other.example.com/in")
        endpoint_for(workspace_a, event_types=["publication.completed"])
        off = endpoint_for(workspace_a)
        WebhookEndpoint.objects.filter(pk=off.pk).update(is_active=False)

        event = webhook_emit(workspace=workspace_a, event="rendition.failed", data={"x": 1})

        assert event.event_id.startswith("evt_")
        assert event.type == "rendition.failed"
        assert event.data == {"x": 1}
        everyone = WebhookDelivery.objects.filter(event=event).order_by("endpoint_id")
        assert [(d.endpoint_id, d.status) for d in everyone] == [
            (wants.pk, "pending"),
            (also.pk, "pending"),
            (off.pk, "held"),  # switched off: kept, no job
        ]
        deliveries = everyone.filter(status="pending")
        jobs = Job.objects.filter(type=DELIVER_JOB).order_by("pk")
        assert [j.payload for j in jobs] == [{"delivery_id": d.pk} for d in deliveries]
        assert [j.dedupe_key for j in jobs] == [d.dedupe_key for d in deliveries]
        assert {j.workspace_id for j in jobs} == {workspace_a.pk}

    def test_it_stores_nothing_when_no_endpoint_wants_the_event(self, workspace_a, workspace_b):
        endpoint_for(workspace_b)

        assert webhook_emit(workspace=workspace_a, event="rendition.failed", data={}) is None

        assert not WebhookEvent.objects.exists()
        assert not Job.objects.filter(type=DELIVER_JOB).exists()

    def test_a_broken_emission_never_undoes_the_callers_writes(
        self, workspace_a, sandbox_account, monkeypatch
    ):
        endpoint_for(workspace_a)

        def broken(*args, **kwargs):
            raise RuntimeError("disk full")

        monkeypatch.setattr(WebhookEvent.objects, "create", broken)
        monkeypatch.setattr(WebhookEvent.objects, "bulk_create", broken)
        publication = publication_create(
            workspace=workspace_a,
            author=None,
            segments=[{"text": "hello"}],
            destinations=[{"account": sandbox_account.pk}],
            scheduled_at=timezone.now() + timedelta(hours=1),
            status="scheduled",
        )

        assert Publication.objects.get(pk=publication.pk).status == "scheduled"
        assert not WebhookDelivery.objects.exists()

    def test_scheduling_a_publication_emits_publication_scheduled_once(
        self, workspace_a, sandbox_account
    ):
        endpoint_for(workspace_a)
        publication = publication_create(
            workspace=workspace_a,
            author=None,
            segments=[{"text": "hello"}],
            destinations=[{"account": sandbox_account.pk}],
            scheduled_at=timezone.now() + timedelta(hours=1),
            status="scheduled",
            reference_key="launch",
        )

        [event] = events(workspace_a)
        assert event.type == "publication.scheduled"
        data = event.data["publication"]
        assert data["id"] == publication.pk
        assert data["status"] == "scheduled"
        assert data["reference_key"] == "launch"
        assert [r["status"] for r in data["renditions"]] == ["scheduled"]

        publication_cancel(publication=publication)
        assert [e.type for e in events(workspace_a)] == [
            "publication.scheduled",
            "publication.completed",
        ]
        assert events(workspace_a)[1].data["publication"]["status"] == "cancelled"

    def test_a_draft_emits_nothing(self, workspace_a, sandbox_account):
        endpoint_for(workspace_a)
        publication_create(
            workspace=workspace_a,
            author=None,
            segments=[{"text": "draft"}],
            destinations=[{"account": sandbox_account.pk}],
        )

        assert events(workspace_a) == []

    def test_resolving_an_ambiguous_rendition_as_published_emits_rendition_published(
        self, workspace_a
    ):
        endpoint_for(workspace_a, event_types=["rendition.published"])
        publication = PublicationFactory(workspace=workspace_a, status="failed")
        rendition = RenditionFactory(
            publication=publication,
            status="failed",
            ambiguous=True,
            last_error={"kind": "outcome_unknown", "message": "timed out"},
        )
        RenditionSegmentFactory(rendition=rendition)

        rendition_resolve(
            rendition=rendition, outcome="published", provider_url="https://x.example/p/1"
        )

        [event] = events(workspace_a)
        assert event.type == "rendition.published"
        assert event.data["rendition"]["id"] == rendition.pk
        assert event.data["rendition"]["provider_url"] == "https://x.example/p/1"
        assert event.data["rendition"]["error"] is None

    def test_a_publication_handed_back_to_scheduled_is_no_news(self, workspace_a):
        endpoint_for(workspace_a)
        publication = PublicationFactory(workspace=workspace_a, status="scheduled")

        emit_publication_status_change(publication, previous="publishing", status="scheduled")
        emit_publication_status_change(publication, previous="scheduled", status="scheduled")
        assert events(workspace_a) == []

        emit_publication_status_change(publication, previous="failed", status="scheduled")
        assert [e.type for e in events(workspace_a)] == ["publication.scheduled"]

    def test_every_event_type_is_known(self):
        assert set(EVENT_TYPES) == {
            "publication.scheduled",
            "publication.completed",
            "rendition.published",
            "rendition.failed",
            "rendition.ambiguous",
            "account.needs_reconnect",
            "publication.review_requested",
            "publication.approved",
            "publication.changes_requested",
            "publication.on_hold",
            "comment.received",
            "comment.replied",
            "post.engagement_reached",
        }


@pytest.fixture
def sandbox_account(workspace_a) -> SocialAccount:
    return sandbox_account_create(workspace=workspace_a, handle="hooked")


# --- from the publish pipeline, end to end (the sandbox over a live server) ------------------


@pytest.fixture
def sandbox(live_server, settings):
    settings.SANDBOX_BASE_URL = live_server.url
    settings.PROVIDER_TIMEOUT_S = 2
    settings.RECONCILE_DELAY_S = 0
    return live_server.url


@pytest.fixture
def pipeline_worker(transactional_db):
    from apps.jobs.worker import Worker

    # Publish jobs only: the delivery jobs stay queued for the assertions.
    return Worker(
        threads=1,
        batch_size=10,
        heartbeat_s=1,
        stale_after_s=30,
        name="pipeline-worker",
        types=["renditions.publish", "renditions.reconcile", "renditions.poll"],
    )


def _drain_publishing(worker, publication, timeout: float = 10) -> Publication:
    """Run the worker's due jobs until none of its types is due (the delivery jobs stay
    queued; a retry or reconciliation due later is left for later)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if run_due(worker):
            continue
        due = Job.objects.unfinished().filter(type__in=worker.types, run_at__lte=db_now())
        if not due.exists():
            break
        time.sleep(0.05)
    publication.refresh_from_db()
    return publication


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("public_dns")
def test_a_published_rendition_emits_rendition_published_then_publication_completed(
    sandbox, pipeline_worker, workspace_a
):
    endpoint = endpoint_for(workspace_a)
    account = sandbox_account_create(workspace=workspace_a, handle="ok")
    publication = _drain_publishing(pipeline_worker, publish_now(workspace_a, [account]))

    assert publication.status == "published"
    types = [e.type for e in events(workspace_a)]
    assert types == ["publication.scheduled", "rendition.published", "publication.completed"]
    published = events(workspace_a, "rendition.published")[0]
    rendition = publication.renditions.get()
    assert published.data["rendition"]["id"] == rendition.pk
    assert published.data["rendition"]["status"] == "published"
    assert published.data["rendition"]["provider_post_id"] == rendition.provider_post_id
    assert published.data["account"] == {"id": account.pk, "platform": "sandbox", "handle": "ok"}
    completed = events(workspace_a, "publication.completed")[0]
    assert completed.data["publication"]["status"] == "published"
    assert WebhookDelivery.objects.filter(endpoint=endpoint).count() == 3
    assert Job.objects.filter(type=DELIVER_JOB, status="pending").count() == 3


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("public_dns")
def test_an_expired_token_emits_rendition_failed_and_account_needs_reconnect_once(
    sandbox, pipeline_worker, workspace_a
):
    endpoint_for(workspace_a)
    account = sandbox_account_create(
        workspace=workspace_a, handle="expired", behaviour={"expired_token": True}
    )
    _drain_publishing(pipeline_worker, publish_now(workspace_a, [account]))
    # A second publication to the account, now known to need reconnecting.
    _drain_publishing(pipeline_worker, publish_now(workspace_a, [account]))

    [reconnect] = events(workspace_a, "account.needs_reconnect")
    assert reconnect.data["account"]["id"] == account.pk
    assert reconnect.data["account"]["status"] == "needs_reconnect"
    failed = events(workspace_a, "rendition.failed")
    assert len(failed) == 2
    error = failed[0].data["rendition"]["error"]
    assert error["kind"] == "auth_expired"
    assert error["action"] == "reconnect"
    assert error["retryable"] is False


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("public_dns")
def test_a_retry_pending_failure_emits_nothing_until_the_outcome(
    sandbox, pipeline_worker, workspace_a
):
    endpoint_for(workspace_a, event_types=["rendition.failed", "rendition.published"])
    account = sandbox_account_create(
        workspace=workspace_a, handle="flaky", behaviour={"server_error_times": 1}
    )
    publication = _drain_publishing(pipeline_worker, publish_now(workspace_a, [account]))

    assert publication.renditions.get().is_retry_pending
    assert events(workspace_a) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("public_dns")
def test_an_unknown_outcome_emits_rendition_ambiguous(
    sandbox, pipeline_worker, workspace_a, settings
):
    settings.PROVIDER_TIMEOUT_S = 0.5
    settings.RECONCILE_DELAY_S = 60
    endpoint_for(workspace_a, event_types=["rendition.ambiguous"])
    account = sandbox_account_create(
        workspace=workspace_a,
        handle="nokey",
        behaviour={
            "hang_after_accept_times": 1,
            "hang_s": 1.5,
            "honours_idempotency_key": False,
        },
    )
    _drain_publishing(pipeline_worker, publish_now(workspace_a, [account]))

    [event] = events(workspace_a)
    assert event.type == "rendition.ambiguous"
    assert event.data["rendition"]["ambiguous"] is True
    assert event.data["rendition"]["error"]["kind"] == "outcome_unknown"

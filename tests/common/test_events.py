"""Domain events: emitted by name, delivered to in-transaction subscribers at once (the
webhooks' outbox) and to the others after the commit, never for a rolled-back write."""

import logging

import pytest
from django.db import connection, transaction

from apps.common import events
from apps.jobs.models import Job
from apps.webhooks.constants import DELIVER_JOB
from apps.webhooks.models import WebhookEvent
from apps.webhooks.services import webhook_endpoint_create
from tests.factories import PublicationFactory, RenditionFactory


@pytest.fixture(autouse=True)
def subscribers(monkeypatch):
    """An empty registry for the test; returns the real one (the webhooks app's)."""
    real = events._subscribers
    monkeypatch.setattr(events, "_subscribers", {name: [] for name in events.PAYLOADS})
    return real


@pytest.fixture
def webhooks_subscribed(subscribers):
    for name, subs in subscribers.items():
        events._subscribers[name].extend(subs)


@pytest.fixture
def endpoint(settings, workspace_a, webhooks_subscribed):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True  # no DNS lookup of the example host
    return webhook_endpoint_create(
        workspace=workspace_a, url="https://127.0.0.1/in", event_types=["rendition.published"]
    )[0]


def recorder(calls: list, label: str = ""):
    def handler(**payload):
        calls.append((label, payload))

    return handler


def test_an_unknown_event_name_raises():
    with pytest.raises(ValueError, match="Unknown event 'rendition.publised'"):
        events.emit("rendition.publised", rendition=None)
    with pytest.raises(ValueError, match="Unknown event"):
        events.subscribe("rendition.publised", recorder([]))


def test_a_payload_with_other_keys_raises():
    with pytest.raises(TypeError, match="publication.status_changed"):
        events.emit(events.PUBLICATION_STATUS_CHANGED, publication=None, status="failed")


# What a webhook can tell about; the security events are for the audit trail.
DELIVERY_EVENTS = {
    "rendition.published",
    "rendition.failed",
    "publication.status_changed",
    "account.needs_reconnect",
    "publication.review_changed",
    "comment.received",
    "comment.replied",
    "post.engagement_reached",
}
SECURITY_EVENTS = {
    "member.invited",
    "member.invite_accepted",
    "member.invite_revoked",
    "member.added",
    "member.role_changed",
    "member.removed",
    "user.email_verified",
    "token.created",
    "token.revoked",
    "account.connected",
    "account.disconnected",
    "webhook.created",
    "webhook.updated",
    "webhook.secret_rotated",
    "webhook.deleted",
    "rendition.resolved",
    "user.two_factor_enabled",
    "user.two_factor_disabled",
    "approval.rule_changed",
    "publication.review_changed",
    "media.alt_text_changed",
    "portal.link_created",
    "portal.link_revoked",
    "portal.viewed",
}


def test_every_event_has_its_payload_listed(subscribers):
    assert set(events.PAYLOADS) == DELIVERY_EVENTS | SECURITY_EVENTS
    assert set(subscribers) == set(events.PAYLOADS)


def test_the_webhooks_app_subscribes_to_every_delivery_event_in_transaction(subscribers):
    for name in DELIVERY_EVENTS:
        subs = subscribers[name]
        assert any(s.in_transaction and "webhooks" in s.handler.__module__ for s in subs), name


def test_the_audit_log_records_every_security_event_in_transaction(subscribers):
    for name in SECURITY_EVENTS:
        subs = subscribers[name]
        assert any(s.in_transaction and "audit" in s.handler.__module__ for s in subs), name


@pytest.mark.django_db(transaction=True)
def test_a_committed_transaction_delivers_once_after_the_commit(workspace_a, endpoint):
    rendition = RenditionFactory(publication__workspace=workspace_a)
    after = []
    events.subscribe(events.RENDITION_PUBLISHED, recorder(after))

    with transaction.atomic():
        events.emit(events.RENDITION_PUBLISHED, rendition=rendition)
        # The outbox rows are written in the transaction; the after-commit handler waits.
        assert WebhookEvent.objects.filter(type="rendition.published").count() == 1
        assert after == []

    assert after == [("", {"rendition": rendition})]
    [event] = WebhookEvent.objects.all()
    assert event.data["rendition"]["id"] == rendition.pk
    assert Job.objects.filter(type=DELIVER_JOB, status="pending").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_transaction_delivers_nothing(workspace_a, endpoint):
    rendition = RenditionFactory(publication__workspace=workspace_a)
    after = []
    events.subscribe(events.RENDITION_PUBLISHED, recorder(after))

    with pytest.raises(RuntimeError), transaction.atomic():
        events.emit(events.RENDITION_PUBLISHED, rendition=rendition)
        raise RuntimeError("the domain write fails later")

    assert after == []
    assert not WebhookEvent.objects.exists()
    assert not Job.objects.filter(type=DELIVER_JOB).exists()


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_an_after_commit_subscriber_runs_at_once(workspace_a):
    rendition = RenditionFactory(publication__workspace=workspace_a)
    after = []
    events.subscribe(events.RENDITION_FAILED, recorder(after))

    events.emit(events.RENDITION_FAILED, rendition=rendition)

    assert after == [("", {"rendition": rendition})]


@pytest.mark.django_db
def test_a_rolled_back_savepoint_drops_its_after_commit_deliveries(
    workspace_a, django_capture_on_commit_callbacks
):
    after = []
    events.subscribe(events.ACCOUNT_NEEDS_RECONNECT, recorder(after))

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            events.emit(events.ACCOUNT_NEEDS_RECONNECT, account="a")
            raise RuntimeError
        events.emit(events.ACCOUNT_NEEDS_RECONNECT, account="b")

    assert len(callbacks) == 1
    assert after == [("", {"account": "b"})]


@pytest.mark.django_db
def test_subscribing_twice_delivers_once(django_capture_on_commit_callbacks):
    after = []
    handler = recorder(after)
    events.subscribe(events.ACCOUNT_NEEDS_RECONNECT, handler)
    events.subscribe(events.ACCOUNT_NEEDS_RECONNECT, handler)

    with django_capture_on_commit_callbacks(execute=True):
        events.emit(events.ACCOUNT_NEEDS_RECONNECT, account="a")

    assert after == [("", {"account": "a"})]


@pytest.mark.django_db
def test_a_failing_subscriber_is_logged_and_the_others_still_run(
    caplog, django_capture_on_commit_callbacks
):
    calls = []

    def broken_outbox(**payload):
        # A database error: without its savepoint it would break the emitter's transaction.
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 / 0")

    def broken_after(**payload):
        raise RuntimeError("receiver down")

    events.subscribe(events.ACCOUNT_NEEDS_RECONNECT, broken_outbox, in_transaction=True)
    events.subscribe(events.ACCOUNT_NEEDS_RECONNECT, recorder(calls, "in"), in_transaction=True)
    events.subscribe(events.ACCOUNT_NEEDS_RECONNECT, broken_after)
    events.subscribe(events.ACCOUNT_NEEDS_RECONNECT, recorder(calls, "after"))

    with (
        caplog.at_level(logging.ERROR, logger="apps.common.events"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        events.emit(events.ACCOUNT_NEEDS_RECONNECT, account="a")
        assert calls == [("in", {"account": "a"})]
        # The emitter's transaction is still usable.
        assert Job.objects.count() == 0

    assert calls == [("in", {"account": "a"}), ("after", {"account": "a"})]
    failed = [r for r in caplog.records if r.name == "apps.common.events"]
    assert [r.subscriber for r in failed] == [broken_outbox.__qualname__, broken_after.__qualname__]
    assert all(r.event == "account.needs_reconnect" and r.exc_info for r in failed)


def batch_recorder(calls: list, label: str = ""):
    def handler(payloads):
        calls.append((label, list(payloads)))

    return handler


def test_emit_many_checks_every_payload_before_delivering_any():
    calls = []
    events.subscribe(events.ACCOUNT_NEEDS_RECONNECT, recorder(calls), in_transaction=True)

    with pytest.raises(TypeError, match="account.needs_reconnect"):
        events.emit_many(events.ACCOUNT_NEEDS_RECONNECT, [{"account": "a"}, {"acount": "b"}])
    with pytest.raises(ValueError, match="Unknown event"):
        events.emit_many("account.needs_reconect", [{"account": "a"}])

    assert calls == []


@pytest.mark.django_db
def test_emit_many_gives_a_batch_subscriber_one_list_and_the_others_one_call_each(
    django_capture_on_commit_callbacks,
):
    calls = []
    events.subscribe(
        events.ACCOUNT_NEEDS_RECONNECT,
        recorder(calls, "in-single"),
        in_transaction=True,
        many=batch_recorder(calls, "in-batch"),
    )
    events.subscribe(events.ACCOUNT_NEEDS_RECONNECT, recorder(calls, "in"), in_transaction=True)
    events.subscribe(
        events.ACCOUNT_NEEDS_RECONNECT,
        recorder(calls, "after-single"),
        many=batch_recorder(calls, "after-batch"),
    )
    events.subscribe(events.ACCOUNT_NEEDS_RECONNECT, recorder(calls, "after"))

    with django_capture_on_commit_callbacks(execute=True):
        events.emit_many(events.ACCOUNT_NEEDS_RECONNECT, iter([{"account": "a"}, {"account": "b"}]))
        assert calls == [
            ("in-batch", [{"account": "a"}, {"account": "b"}]),
            ("in", {"account": "a"}),
            ("in", {"account": "b"}),
        ]
        events.emit_many(events.ACCOUNT_NEEDS_RECONNECT, [])  # nothing to say: no call

    assert calls[3:] == [
        ("after-batch", [{"account": "a"}, {"account": "b"}]),
        ("after", {"account": "a"}),
        ("after", {"account": "b"}),
    ]


@pytest.mark.django_db
def test_emit_many_in_a_rolled_back_transaction_delivers_nothing_after(
    django_capture_on_commit_callbacks,
):
    calls = []
    events.subscribe(events.ACCOUNT_NEEDS_RECONNECT, recorder(calls), many=batch_recorder(calls))

    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        events.emit_many(events.ACCOUNT_NEEDS_RECONNECT, [{"account": "a"}])
        raise RuntimeError("the domain write fails later")

    assert callbacks == []
    assert calls == []


@pytest.mark.django_db(transaction=True)
def test_emit_many_outbox_rows_go_with_a_rolled_back_transaction(
    settings, workspace_a, webhooks_subscribed
):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True  # no DNS lookup of the example host
    publication = PublicationFactory(workspace=workspace_a, status="scheduled")
    webhook_endpoint_create(
        workspace=workspace_a, url="https://127.0.0.1/in", event_types=["publication.scheduled"]
    )
    change = {"publication": publication, "previous": "draft", "status": "scheduled"}

    with pytest.raises(RuntimeError), transaction.atomic():
        events.emit_many(events.PUBLICATION_STATUS_CHANGED, [change])
        assert WebhookEvent.objects.count() == 1
        raise RuntimeError("the domain write fails later")

    assert not WebhookEvent.objects.exists()
    assert not Job.objects.filter(type=DELIVER_JOB).exists()


@pytest.mark.django_db
def test_a_failing_batch_is_undone_and_delivered_one_by_one(
    caplog, django_capture_on_commit_callbacks
):
    calls = []

    def half_then_broken(payloads):
        Job.objects.create(type="noop", payload={})  # undone with the batch's savepoint
        calls.append(("batch", len(payloads)))
        raise RuntimeError("one bad payload")

    def single(**payload):
        if payload["account"] == "bad":
            raise RuntimeError("bad")
        calls.append(("single", payload))

    events.subscribe(
        events.ACCOUNT_NEEDS_RECONNECT, single, in_transaction=True, many=half_then_broken
    )

    with caplog.at_level(logging.ERROR, logger="apps.common.events"):
        events.emit_many(
            events.ACCOUNT_NEEDS_RECONNECT, [{"account": "a"}, {"account": "bad"}, {"account": "c"}]
        )

    assert calls == [("batch", 3), ("single", {"account": "a"}), ("single", {"account": "c"})]
    assert Job.objects.count() == 0
    failed = [r for r in caplog.records if r.name == "apps.common.events"]
    assert [r.subscriber for r in failed] == [half_then_broken.__qualname__, single.__qualname__]

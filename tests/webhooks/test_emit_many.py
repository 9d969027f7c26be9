"""A batch of publication status changes (a bulk create) records the same webhook events,
deliveries and delivery jobs as one emit per change, with a few statements in all."""

import json
import logging

import pytest
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.common import events
from apps.jobs.models import Job
from apps.publishing.services.bulk import publications_bulk_create
from apps.webhooks.constants import DELIVER_JOB
from apps.webhooks.endpoints import webhook_endpoint_create
from apps.webhooks.events import publication_data
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from tests.api.helpers import later
from tests.factories import PublicationFactory, RenditionFactory, SocialAccountFactory


@pytest.fixture
def endpoints(settings, workspace_a, workspace_b):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True  # no DNS lookup of the example hosts

    def create(workspace, path, event_types):
        return webhook_endpoint_create(
            workspace=workspace, url=f"https://127.0.0.1/{path}", event_types=event_types
        )[0]

    made = {
        "scheduled": create(workspace_a, "scheduled", ["publication.scheduled"]),
        "both": create(workspace_a, "both", ["publication.scheduled", "publication.completed"]),
        "completed": create(workspace_a, "completed", ["publication.completed"]),
        "off": create(workspace_a, "off", ["publication.scheduled"]),
        "other": create(workspace_b, "other", ["publication.scheduled"]),
    }
    WebhookEndpoint.objects.filter(pk=made["off"].pk).update(is_active=False)
    return made


@pytest.fixture
def changes(workspace_a, workspace_b):
    """Status changes over two workspaces: scheduled, completed, and two that are no news."""

    def publication(workspace, status):
        made = PublicationFactory(workspace=workspace, status=status)
        RenditionFactory(publication=made, status="scheduled")
        RenditionFactory(publication=made, status="scheduled")
        return made

    return [
        {"publication": publication(workspace_a, "scheduled"), "previous": "draft"},
        {"publication": publication(workspace_b, "scheduled"), "previous": "draft"},
        {"publication": publication(workspace_a, "failed"), "previous": "publishing"},
        {"publication": publication(workspace_a, "scheduled"), "previous": "publishing"},
        {"publication": publication(workspace_a, "publishing"), "previous": "scheduled"},
        {"publication": publication(workspace_a, "scheduled"), "previous": "failed"},
    ]


def payloads(changes):
    return [{**change, "status": change["publication"].status} for change in changes]


def outbox() -> list[tuple]:
    """The outbox rows, without the ids and event ids that differ from one run to the next,
    each workspace's in the order they were recorded (a receiver only sees its own)."""
    jobs = {
        job.payload["delivery_id"]: job
        for job in Job.objects.filter(type=DELIVER_JOB).order_by("pk")
    }
    rows = []
    for event in WebhookEvent.objects.order_by("workspace_id", "pk"):
        deliveries = WebhookDelivery.objects.filter(event=event).order_by("endpoint_id")
        rows.append(
            (
                event.workspace_id,
                event.type,
                event.data,
                [
                    (
                        d.workspace_id,
                        d.endpoint_id,
                        d.status,
                        jobs[d.pk].dedupe_key == d.dedupe_key,
                        jobs[d.pk].status,
                        jobs[d.pk].organization_id,
                        jobs[d.pk].workspace_id,
                        jobs[d.pk].max_attempts,
                    )
                    if d.status != "held"
                    else (d.workspace_id, d.endpoint_id, d.status, d.pk in jobs)
                    for d in deliveries
                ],
            )
        )
    # One job per delivery, no other; none for a delivery held by an endpoint switched off.
    assert len(jobs) == WebhookDelivery.objects.exclude(status="held").count()
    return rows


def clear_outbox() -> None:
    WebhookEvent.objects.all().delete()
    Job.objects.filter(type=DELIVER_JOB).delete()


@pytest.mark.django_db
def test_a_batch_records_the_same_rows_as_one_emit_per_change(
    endpoints, changes, django_assert_max_num_queries, caplog
):
    for payload in payloads(changes):
        events.emit(events.PUBLICATION_STATUS_CHANGED, **payload)
    one_by_one = outbox()
    clear_outbox()

    # Two workspaces: per workspace an endpoint lookup, the data (2), three inserts and
    # the organization; plus the savepoint and the workers' wake-up.
    with django_assert_max_num_queries(20):
        events.emit_many(events.PUBLICATION_STATUS_CHANGED, payloads(changes))
    batched = outbox()

    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # no fallback
    assert batched == one_by_one
    types = [(row[0], row[1], [d[1] for d in row[3]]) for row in batched]
    a, b = changes[0]["publication"].workspace_id, changes[1]["publication"].workspace_id
    scheduled, both, completed = (endpoints[k].pk for k in ("scheduled", "both", "completed"))
    off = endpoints["off"].pk  # switched off: its deliveries held
    assert types == [
        (a, "publication.scheduled", [scheduled, both, off]),
        (a, "publication.completed", [both, completed]),
        (a, "publication.scheduled", [scheduled, both, off]),
        (b, "publication.scheduled", [endpoints["other"].pk]),
    ]
    assert [len(row[2]["publication"]["renditions"]) for row in batched] == [2, 2, 2, 2]


@pytest.mark.django_db
def test_a_batch_no_endpoint_wants_stores_nothing(workspace_a, changes):
    with transaction.atomic():
        events.emit_many(events.PUBLICATION_STATUS_CHANGED, payloads(changes))

    assert not WebhookEvent.objects.exists()
    assert not Job.objects.filter(type=DELIVER_JOB).exists()


@pytest.mark.django_db
def test_a_broken_batch_falls_back_to_one_emit_per_change(endpoints, changes, monkeypatch):
    for payload in payloads(changes):
        events.emit(events.PUBLICATION_STATUS_CHANGED, **payload)
    one_by_one = outbox()
    clear_outbox()

    real_bulk_create = WebhookDelivery.objects.bulk_create

    def broken(*args, **kwargs):
        real_bulk_create(*args, **kwargs)
        raise RuntimeError("disk full")

    monkeypatch.setattr(WebhookDelivery.objects, "bulk_create", broken)
    events.emit_many(events.PUBLICATION_STATUS_CHANGED, payloads(changes))

    # The batch's own rows were undone with its savepoint; the single emits wrote theirs.
    assert outbox() == one_by_one


@pytest.mark.django_db
@pytest.mark.parametrize("count", [3, 30])
def test_a_bulk_create_sends_one_event_per_scheduled_publication(endpoints, workspace_a, count):
    account = SocialAccountFactory(workspace=workspace_a, platform="sandbox")
    items = [
        {
            "text": f"Post {i}",
            "destinations": [{"account": account.pk}],
            "status": "scheduled" if i % 3 else "draft",
            "scheduled_at": later(hours=i + 1),
        }
        for i in range(count)
    ]

    with CaptureQueriesContext(connection) as captured:
        outcomes = publications_bulk_create(workspace=workspace_a, author=None, items=items)

    scheduled = [o.publication for o in outcomes if o.publication.status == "scheduled"]
    assert len(scheduled) == sum(1 for i in range(count) if i % 3)
    recorded = list(WebhookEvent.objects.order_by("pk"))
    assert [e.type for e in recorded] == ["publication.scheduled"] * len(scheduled)
    # The customer gets what a single create sends: the publication as stored.
    assert [e.data for e in recorded] == [json_roundtrip(publication_data(p.pk)) for p in scheduled]
    held = WebhookDelivery.objects.filter(status="held")
    assert {d.endpoint_id for d in held} == {endpoints["off"].pk}  # kept for when it is on
    assert held.count() == len(scheduled)
    deliveries = WebhookDelivery.objects.exclude(status="held").order_by("event_id", "endpoint_id")
    wanted = [endpoints["scheduled"].pk, endpoints["both"].pk]
    assert [(d.event_id, d.endpoint_id) for d in deliveries] == [
        (e.pk, endpoint) for e in recorded for endpoint in wanted
    ]
    assert Job.objects.filter(type=DELIVER_JOB, status="pending").count() == len(deliveries)
    # The outbox's statements do not grow with the number of items.
    outbox_statements = [q for q in captured.captured_queries if "webhooks_" in q["sql"]]
    assert len(outbox_statements) <= 4


def json_roundtrip(data: dict) -> dict:
    return json.loads(DjangoJSONEncoder().encode(data))

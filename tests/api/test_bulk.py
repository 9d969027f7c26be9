from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.jobs.models import Job
from apps.publications.models import Publication
from apps.publishing.delivery.enqueue import publish_dedupe_key
from apps.renditions.models import Rendition
from tests.api.helpers import error, later
from tests.factories import MediaAssetFactory, SocialAccountFactory

URL = "/api/v1/publications/bulk"


def bulk(client, items, **headers):
    return client.post(URL, {"items": items}, format="json", **headers)


def test_it_creates_good_items_and_reports_bad_ones_in_order(api_a, sandbox_a, sandbox_a2):
    items = [
        {"text": "One", "destinations": [{"account": sandbox_a.pk}], "reference_key": "r1"},
        {"text": "", "destinations": [{"account": sandbox_a.pk}]},  # no text
        {
            "segments": [{"text": "Three"}],
            "destinations": [{"account": sandbox_a2.pk}],
            "status": "scheduled",
            "scheduled_at": later(),
        },
        {"text": "Four", "colour": "red"},  # unknown field
        {"text": "Five", "scheduled_at": "tomorrow"},
    ]

    response = bulk(api_a, items)

    assert response.status_code == 200
    body = response.json()
    assert [row["index"] for row in body["items"]] == [0, 1, 2, 3, 4]
    assert [row["status"] for row in body["items"]] == [
        "created",
        "error",
        "created",
        "error",
        "error",
    ]
    assert (body["created"], body["exists"], body["errors"]) == (2, 0, 3)
    first, second, third, fourth = body["items"][:4]
    assert first["reference_key"] == "r1"
    assert first["publication"]["reference_key"] == "r1"
    assert first["publication"]["renditions"][0]["account"] == sandbox_a.pk
    assert "error" not in first
    assert second["error"]["code"] == "VALIDATION_ERROR"
    assert "text" in second["error"]["details"]
    assert "publication" not in second
    assert third["publication"]["status"] == "scheduled"
    assert fourth["error"]["code"] == "UNKNOWN_FIELD"
    assert body["items"][4]["error"]["code"] == "INVALID_DATETIME"
    assert Publication.objects.count() == 2
    rendition = Rendition.objects.get(publication_id=third["publication"]["id"])
    assert rendition.status == Rendition.Status.SCHEDULED
    job = Job.objects.get(dedupe_key=publish_dedupe_key(rendition.pk))
    assert job.status == Job.Status.PENDING
    assert job.run_at == rendition.effective_scheduled_at


def test_what_it_writes_matches_the_single_create(api_a, sandbox_a, sandbox_a2, media_a):
    item = {
        "segments": [
            {"text": "Hi", "media": [{"id": media_a.pk, "alt_text": "A dog"}]},
            {"text": "Two"},
        ],
        "destinations": [
            {"account": sandbox_a.pk},
            {"account": sandbox_a2.pk, "segments": [{"text": "Own"}], "settings": {}},
        ],
        "local_time": "2031-03-30T02:30",
        "timezone": "Europe/Warsaw",
        "status": "scheduled",
    }
    single = api_a.post("/api/v1/publications", item, format="json").json()

    row = bulk(api_a, [item]).json()["items"][0]

    assert row["status"] == "created"
    made = row["publication"]
    for name in ("status", "scheduled_at", "timezone", "segments"):
        assert made[name] == single[name]
    for ours, theirs in zip(made["renditions"], single["renditions"], strict=True):
        for name in ("account", "status", "scheduled_at", "segments", "settings"):
            assert ours[name] == theirs[name]


def test_a_rerun_with_the_same_reference_keys_creates_nothing_twice(api_a, sandbox_a):
    items = [
        {"text": f"Post {i}", "destinations": [{"account": sandbox_a.pk}], "reference_key": f"k{i}"}
        for i in range(3)
    ]
    first = bulk(api_a, items).json()

    again = bulk(api_a, [*items, {"text": "New", "reference_key": "k9"}]).json()

    assert [row["status"] for row in again["items"]] == ["exists"] * 3 + ["created"]
    assert [row["publication"]["id"] for row in again["items"][:3]] == [
        row["publication"]["id"] for row in first["items"]
    ]
    assert Publication.objects.count() == 4


def test_an_existing_reference_key_answers_exists_even_when_its_time_has_passed(api_a, sandbox_a):
    item = {
        "text": "Soon",
        "destinations": [{"account": sandbox_a.pk}],
        "status": "scheduled",
        "scheduled_at": later(minutes=1),
        "reference_key": "soon",
    }
    bulk(api_a, [item])
    item["scheduled_at"] = later(hours=-2)

    row = bulk(api_a, [item]).json()["items"][0]

    assert row["status"] == "exists"
    assert Publication.objects.count() == 1


def test_a_key_repeated_within_the_request_is_created_once(api_a):
    body = bulk(
        api_a, [{"text": "A", "reference_key": "same"}, {"text": "B", "reference_key": "same"}]
    )

    rows = body.json()["items"]
    assert [row["status"] for row in rows] == ["created", "exists"]
    assert rows[1]["publication"]["id"] == rows[0]["publication"]["id"]
    assert Publication.objects.count() == 1


def test_the_idempotency_key_replays_the_whole_request(api_a, sandbox_a):
    items = [{"text": "Once"}, {"text": ""}]
    first = bulk(api_a, items, HTTP_IDEMPOTENCY_KEY="bulk-1")

    again = bulk(api_a, items, HTTP_IDEMPOTENCY_KEY="bulk-1")
    other = bulk(api_a, [{"text": "Else"}], HTTP_IDEMPOTENCY_KEY="bulk-1")

    assert first.status_code == 200
    assert again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == {**first.json(), "replayed": True}
    assert other.status_code == 409
    assert error(other)["code"] == "IDEMPOTENCY_CONFLICT"
    assert Publication.objects.count() == 1


def test_more_than_500_items_are_refused_and_nothing_is_created(api_a):
    response = bulk(api_a, [{"text": f"P{i}"} for i in range(501)])

    assert response.status_code == 400
    err = error(response)
    assert err["code"] == "TOO_MANY_ITEMS"
    assert "items" in err["details"]
    assert Publication.objects.count() == 0


def test_500_items_are_accepted(api_a):
    response = bulk(api_a, [{"text": f"P{i}"} for i in range(500)])

    assert response.status_code == 200
    assert response.json()["created"] == 500
    assert Publication.objects.count() == 500


@pytest.mark.parametrize(
    "body", [{}, {"items": "x"}, {"items": [], "extra": 1}, [], {"items": [{"text": "A"}, 5]}]
)
def test_a_body_without_a_list_of_items_is_a_400(api_a, body):
    response = api_a.post(URL, body, format="json")

    assert response.status_code == 400
    assert error(response)["code"] in {"VALIDATION_ERROR", "UNKNOWN_FIELD"}
    assert Publication.objects.count() == 0


def test_the_monthly_quota_is_counted_per_item(api_a, org_a):
    org_a.monthly_post_quota = 3
    org_a.save()
    api_a.post("/api/v1/publications", {"text": "Earlier"}, format="json")

    rows = bulk(api_a, [{"text": "A"}, {"text": ""}, {"text": "B"}, {"text": "C"}]).json()["items"]

    assert [row["status"] for row in rows] == ["created", "error", "created", "error"]
    assert rows[3]["error"]["code"] == "MONTHLY_QUOTA_EXCEEDED"
    assert rows[3]["error"]["details"]["used"] == 3
    assert Publication.objects.count() == 3


def test_daily_caps_count_the_items_accepted_earlier_in_the_request(api_a, workspace_a):
    instagram = SocialAccountFactory(workspace=workspace_a, platform="instagram", handle="insta")
    jpeg = MediaAssetFactory(workspace=workspace_a, mime_type="image/jpeg", alt_text="A cat")
    when = (timezone.now() + timedelta(days=2)).replace(hour=12, minute=0)
    earlier = Publication.objects.bulk_create(
        Publication(workspace=workspace_a, scheduled_at=when, status="scheduled") for _ in range(98)
    )
    Rendition.objects.bulk_create(
        Rendition(
            publication=publication,
            workspace=workspace_a,
            social_account=instagram,
            platform="instagram",
            status=Rendition.Status.SCHEDULED,
        )
        for publication in earlier
    )
    item = {
        "segments": [{"text": "pic", "media": [{"id": jpeg.pk}]}],
        "destinations": [{"account": instagram.pk}],
        "status": "scheduled",
        "scheduled_at": when.isoformat(),
    }
    next_day = {**item, "scheduled_at": (when + timedelta(days=1)).isoformat()}

    rows = bulk(api_a, [item, item, item, next_day]).json()["items"]

    assert [row["status"] for row in rows] == ["created", "created", "error", "created"]
    err = rows[2]["error"]
    assert err["code"] == "DAILY_CAP_EXCEEDED"
    assert err["details"]["used"] == 100
    assert err["details"]["limit"] == 100
    assert err["details"]["field"] == "destinations.0.account"


def test_another_workspaces_account_is_refused_per_item(api_a, sandbox_a, account_b, media_b):
    rows = bulk(
        api_a,
        [
            {"text": "Mine", "destinations": [{"account": sandbox_a.pk}]},
            {"text": "Theirs", "destinations": [{"account": account_b.pk}]},
            {"segments": [{"text": "Their media", "media": [{"id": media_b.pk}]}]},
        ],
    ).json()["items"]

    assert [row["status"] for row in rows] == ["created", "error", "error"]
    assert rows[1]["error"]["code"] == "NOT_FOUND"
    assert rows[1]["error"]["details"] == {
        "destinations.0.account": ["No such account in this workspace."]
    }
    assert rows[2]["error"]["details"] == {
        "segments.0.media.0.id": ["No such media in this workspace."]
    }
    assert Rendition.objects.filter(social_account=account_b).count() == 0


def test_a_scheduled_item_past_the_grace_or_failing_the_catalog_is_an_error(api_a, sandbox_a):
    rows = bulk(
        api_a,
        [
            {
                "text": "Old",
                "destinations": [{"account": sandbox_a.pk}],
                "status": "scheduled",
                "scheduled_at": later(hours=-1),
            },
            {"text": "Now", "destinations": [{"account": sandbox_a.pk}], "status": "scheduled"},
        ],
    ).json()["items"]

    assert rows[0]["error"]["code"] == "SCHEDULE_IN_PAST"
    assert rows[1]["status"] == "created"
    assert rows[1]["publication"]["status"] == "scheduled"


def test_it_needs_the_write_scope_and_publish_for_scheduled_items(client_with, sandbox_a):
    read_only = bulk(client_with("read"), [{"text": "A"}])
    writer = client_with("write")
    scheduled = bulk(
        writer, [{"text": "A", "destinations": [{"account": sandbox_a.pk}], "status": "scheduled"}]
    )
    draft = bulk(writer, [{"text": "A"}])

    assert read_only.status_code == 403
    assert error(read_only)["code"] == "INSUFFICIENT_SCOPE"
    assert scheduled.status_code == 403
    assert draft.status_code == 200
    assert Publication.objects.count() == 1


def test_it_needs_a_token(db, client):
    response = client.post(URL, {"items": []}, content_type="application/json")

    assert response.status_code == 401
    assert error(response)["code"] == "UNAUTHENTICATED"


def _service_statements(queries) -> list[str]:
    """The statements of a request, without the webhook outbox's: each publication that
    becomes scheduled emits one status event, as a single create does, and the outbox
    looks for subscribed endpoints in a savepoint."""
    return [
        q["sql"] for q in queries if "webhooks_" not in q["sql"] and "SAVEPOINT" not in q["sql"]
    ]


@pytest.mark.parametrize("status", ["draft", "scheduled"])
def test_it_writes_a_handful_of_statements_for_many_items(api_a, sandbox_a, sandbox_a2, status):
    items = [
        {
            "text": f"Post {i}",
            "destinations": [{"account": sandbox_a.pk}, {"account": sandbox_a2.pk}],
            "status": status,
            "scheduled_at": later(hours=i + 1),
            "reference_key": f"n{i}",
        }
        for i in range(100)
    ]
    with CaptureQueriesContext(connection) as captured:
        response = bulk(api_a, items)

    assert response.json()["created"] == 100
    # Authentication, throttling and the report's reads come on top of the service's
    # statements; none of them grows with the number of items.
    assert len(_service_statements(captured.captured_queries)) <= 30
    jobs = Job.objects.filter(type="renditions.publish").count()
    assert jobs == (200 if status == "scheduled" else 0)


def test_an_unknown_field_with_a_nul_in_its_name_is_reported_and_stored(api_a):
    response = bulk(api_a, [{"text": "A", "bad\u0000name": 1}], HTTP_IDEMPOTENCY_KEY="nul")

    assert response.status_code == 200
    row = response.json()["items"][0]
    assert row["error"]["code"] == "UNKNOWN_FIELD"
    assert row["error"]["details"] == {"bad\ufffdname": ["Unknown field."]}

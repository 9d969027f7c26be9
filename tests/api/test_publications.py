from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone

from apps.jobs.models import Job
from apps.publications.models import Publication
from apps.publishing.delivery.enqueue import publish_dedupe_key
from apps.renditions.models import DeliveryAttempt, Rendition, normalize_error
from tests.api.helpers import error, later
from tests.factories import (
    MediaAssetFactory,
    PublicationFactory,
    RenditionFactory,
    RenditionSegmentFactory,
    SocialAccountFactory,
)

URL = "/api/v1/publications"

RENDITION_KEYS = {
    "id",
    "publication",
    "account",
    "account_handle",
    "platform",
    "status",
    "scheduled_at",
    "published_at",
    "provider_post_id",
    "provider_url",
    "attempts",
    "next_retry_at",
    "ambiguous",
    "manual_retry_count",
    "error",
    "settings",
    "segments",
    "delivery_attempts",
    "first_comment",
}


def publish_job(rendition_id: int) -> Job:
    return Job.objects.get(dedupe_key=publish_dedupe_key(rendition_id), status="pending")


def create(client, **body):
    return client.post(URL, body, format="json")


# --- create ---------------------------------------------------------------------------------


def test_it_creates_a_draft_from_the_text_shorthand(api_a, sandbox_a):
    response = create(api_a, text="Hello", destinations=[{"account": sandbox_a.pk}])

    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "draft"
    assert body["revision"] == 1
    assert body["segments"] == [{"position": 0, "text": "Hello", "media": []}]
    (rendition,) = body["renditions"]
    assert set(rendition) == RENDITION_KEYS
    assert rendition["account"] == sandbox_a.pk
    assert rendition["platform"] == "sandbox"
    assert rendition["status"] == "draft"
    assert rendition["error"] is None
    publication = Publication.objects.get(pk=body["id"])
    assert publication.workspace_id == sandbox_a.workspace_id


def test_it_schedules_to_two_destinations_with_segments_and_media(
    api_a, sandbox_a, sandbox_a2, media_a
):
    when = later(hours=2)
    response = create(
        api_a,
        segments=[
            {"text": "First", "media": [{"id": media_a.pk, "alt_text": "A red square"}]},
            {"text": "Second"},
        ],
        destinations=[{"account": sandbox_a.pk}, {"account": sandbox_a2.pk}],
        scheduled_at=when,
        status="scheduled",
        reference_key="launch-1",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "scheduled"
    assert body["reference_key"] == "launch-1"
    assert body["segments"][0]["media"] == [{"id": media_a.pk, "alt_text": "A red square"}]
    assert [r["status"] for r in body["renditions"]] == ["scheduled", "scheduled"]
    for rendition in body["renditions"]:
        assert datetime.fromisoformat(rendition["scheduled_at"]) == datetime.fromisoformat(when)
        assert publish_job(rendition["id"]).run_at == datetime.fromisoformat(when)


def test_a_local_time_in_a_zone_follows_the_dst_rules(api_a, sandbox_a):
    with time_machine.travel(datetime(2027, 3, 10, 12, 0, tzinfo=UTC), tick=False):
        response = create(
            api_a,
            text="Spring",
            destinations=[{"account": sandbox_a.pk}],
            local_time="2027-03-28T02:30",  # skipped by the spring-forward gap in Warsaw
            timezone="Europe/Warsaw",
        )

    assert response.status_code == 201
    assert response.json()["scheduled_at"] == "2027-03-28T01:30:00Z"
    assert response.json()["timezone"] == "Europe/Warsaw"


def test_scheduling_needs_the_publish_scope(client_with, sandbox_a):
    client = client_with("read", "write")
    body = {"text": "Hi", "destinations": [{"account": sandbox_a.pk}], "status": "scheduled"}

    response = client.post(URL, body, format="json")

    assert response.status_code == 403
    assert error(response)["code"] == "INSUFFICIENT_SCOPE"
    assert error(response)["details"]["required"] == ["write", "publish"]
    assert not Publication.objects.exists()
    body["status"] = "draft"
    assert client.post(URL, body, format="json").status_code == 201


def test_validation_errors_name_each_field_path(api_a, sandbox_a):
    response = create(
        api_a,
        segments=[{"text": "fine"}, {"text": "   "}],
        destinations=[{"account": sandbox_a.pk, "segments": [{"text": ["not", "text"]}]}],
    )

    assert response.status_code == 400
    err = error(response)
    assert err["code"] == "VALIDATION_ERROR"
    assert "destinations.0.segments.0.text" in err["details"]


def test_the_service_reports_domain_problems_by_path(api_a, sandbox_a):
    response = create(api_a, segments=[{"text": "fine"}, {"text": "   "}])

    assert response.status_code == 400
    assert error(response)["details"] == {"segments.1.text": ["Write some text or attach media."]}


def test_unknown_fields_are_named_with_their_path(api_a, sandbox_a):
    response = create(
        api_a,
        segments=[{"text": "Hi", "colour": "red"}],
        destinations=[{"account": sandbox_a.pk, "when": "now"}],
        titel="typo",
    )

    assert response.status_code == 400
    err = error(response)
    assert err["code"] == "UNKNOWN_FIELD"
    assert set(err["details"]) == {"segments.0.colour", "destinations.0.when", "titel"}


def test_text_and_segments_together_are_refused(api_a):
    response = create(api_a, text="a", segments=[{"text": "b"}])
    assert response.status_code == 400
    assert "text" in error(response)["details"]


def test_an_instant_without_offset_is_refused_with_its_code(api_a, sandbox_a):
    response = create(
        api_a, text="Hi", destinations=[{"account": sandbox_a.pk}], scheduled_at="2099-01-01T09:00"
    )
    assert response.status_code == 400
    assert error(response)["code"] == "MISSING_UTC_OFFSET"
    assert "scheduled_at" in error(response)["details"]


def test_a_reused_reference_key_is_a_conflict_naming_the_publication(api_a):
    first = create(api_a, text="One", reference_key="weekly-42").json()

    response = create(api_a, text="Two", reference_key="weekly-42")

    assert response.status_code == 409
    err = error(response)
    assert err["code"] == "REFERENCE_KEY_EXISTS"
    assert err["details"] == {"reference_key": "weekly-42", "publication_id": first["id"]}
    assert Publication.objects.count() == 1


def test_another_workspaces_account_is_not_found(api_a, account_b, media_b):
    response = create(
        api_a,
        segments=[{"text": "Hi", "media": [{"id": media_b.pk}]}],
        destinations=[{"account": account_b.pk}],
    )
    assert response.status_code == 404
    assert set(error(response)["details"]) == {"segments.0.media.0.id", "destinations.0.account"}


# --- list and detail ------------------------------------------------------------------------


def test_it_lists_only_this_workspace_newest_first(api_a, workspace_a, workspace_b):
    mine = [PublicationFactory(workspace=workspace_a) for _ in range(3)]
    PublicationFactory(workspace=workspace_b)

    response = api_a.get(URL)

    assert response.status_code == 200
    assert [p["id"] for p in response.json()["results"]] == [p.pk for p in reversed(mine)]
    assert response.json()["next"] is None


def test_it_filters_by_status_and_time_range(api_a, workspace_a):
    base = timezone.now() + timedelta(days=1)
    early = PublicationFactory(workspace=workspace_a, status="scheduled", scheduled_at=base)
    late = PublicationFactory(
        workspace=workspace_a, status="scheduled", scheduled_at=base + timedelta(days=2)
    )
    PublicationFactory(workspace=workspace_a, status="draft", scheduled_at=base)
    failed = PublicationFactory(workspace=workspace_a, status="failed", scheduled_at=base)

    def ids(**params):
        response = api_a.get(URL, params)
        assert response.status_code == 200, response.json()
        return {p["id"] for p in response.json()["results"]}

    assert ids(status="scheduled") == {early.pk, late.pk}
    assert ids(status="scheduled,failed") == {early.pk, late.pk, failed.pk}
    assert ids(
        status="scheduled",
        scheduled_after=(base - timedelta(hours=1)).isoformat(),
        scheduled_before=(base + timedelta(days=1)).isoformat(),
    ) == {early.pk}


def test_pages_are_stable_while_rows_are_added(api_a, workspace_a):
    existing = [PublicationFactory(workspace=workspace_a).pk for _ in range(5)]

    first = api_a.get(URL, {"limit": 2}).json()
    PublicationFactory(workspace=workspace_a)  # a new one arrives between two pages
    seen = [p["id"] for p in first["results"]]
    next_url = first["next"]
    while next_url:
        page = api_a.get(next_url).json()
        seen += [p["id"] for p in page["results"]]
        next_url = page["next"]

    assert seen == sorted(existing, reverse=True)


def test_a_cursor_is_the_plain_text_the_schema_states(api_a, workspace_a):
    ids = [PublicationFactory(workspace=workspace_a).pk for _ in range(4)]

    second = api_a.get(URL, {"limit": 2}).json()["next"]
    assert f"cursor={ids[2]}&" in second  # beyond the last id shown
    page = api_a.get(second).json()
    assert [p["id"] for p in page["results"]] == [ids[1], ids[0]]
    back = api_a.get(page["previous"]).json()
    assert [p["id"] for p in back["results"]] == [ids[3], ids[2]]

    # Any string of the stated form is a page: beyond an id, before one, or past the end.
    assert [p["id"] for p in api_a.get(URL, {"cursor": str(ids[1])}).json()["results"]] == [ids[0]]
    assert [p["id"] for p in api_a.get(URL, {"cursor": f"r{ids[1]}"}).json()["results"]] == [
        ids[3],
        ids[2],
    ]
    for cursor in ("", "0", ".3", "r", "999999999999999999.9999"):
        assert api_a.get(URL, {"cursor": cursor}).status_code == 200, cursor


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"status": "sent"}, "status"),
        ({"status": "draft,,failed"}, "status"),
        ({"status": "draft,draft"}, "status"),
        ({"scheduled_after": "yesterday"}, "scheduled_after"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": "cD1hYmM="}, "cursor"),  # an earlier (base64) form
        ({"cursor": "12\n"}, "cursor"),
        ({"cursor": "1234567890123456789"}, "cursor"),  # longer than any id
    ],
)
def test_bad_filters_and_cursors_are_400(api_a, params, path):
    response = api_a.get(URL, params)
    assert response.status_code == 400
    assert path in error(response)["details"]


def test_the_detail_shows_each_destination_with_its_error_and_attempts(api_a, workspace_a):
    publication = PublicationFactory(workspace=workspace_a, status="partially_published")
    published = RenditionFactory(
        publication=publication,
        status="published",
        published_at=timezone.now(),
        provider_post_id="p-1",
        provider_url="https://sandbox.example/p-1",
        attempts=1,
    )
    failed = RenditionFactory(
        publication=publication,
        status="failed",
        attempts=3,
        ambiguous=True,
        last_error=normalize_error(
            {
                "kind": "timeout_after_send",
                "code": "timeout",
                "http_status": None,
                "message": "No answer in time.",
                "retryable": False,
                "action": "check_platform",
            }
        ),
    )
    RenditionSegmentFactory(rendition=failed, text="Hi")
    DeliveryAttempt.objects.create(
        rendition=failed,
        workspace=workspace_a,
        kind="publish",
        outcome="unknown",
        idempotency_key="rendition-key-1",
        error={"kind": "timeout_after_send"},
        finished_at=timezone.now(),
    )

    response = api_a.get(f"{URL}/{publication.pk}")

    assert response.status_code == 200
    body = response.json()
    by_id = {r["id"]: r for r in body["renditions"]}
    assert by_id[published.pk]["provider_url"] == "https://sandbox.example/p-1"
    assert by_id[published.pk]["error"] is None
    shown = by_id[failed.pk]
    assert shown["ambiguous"] is True
    assert shown["attempts"] == 3
    assert shown["error"] == {
        "kind": "timeout_after_send",
        "code": "timeout",
        "http_status": None,
        "message": "No answer in time.",
        "retryable": False,
        "action": "check_platform",
        "retry_at": None,
        "check_at": None,
        "details": {},
    }
    (attempt,) = shown["delivery_attempts"]
    assert attempt["outcome"] == "unknown"
    assert attempt["idempotency_key"] == "rendition-key-1"
    assert attempt["error"] == {"kind": "timeout_after_send"}
    assert attempt["started_at"] and attempt["finished_at"]
    assert shown["segments"][0]["text"] == "Hi"


def test_the_detail_of_an_unknown_id_is_404(api_a):
    response = api_a.get(f"{URL}/999999999")
    assert response.status_code == 404
    assert error(response)["code"] == "NOT_FOUND"


# --- edit -----------------------------------------------------------------------------------


def test_an_edit_with_the_current_revision_bumps_it(api_a, sandbox_a):
    created = create(api_a, text="Draft", destinations=[{"account": sandbox_a.pk}]).json()

    response = api_a.patch(f"{URL}/{created['id']}", {"revision": 1, "text": "Edited"})

    assert response.status_code == 200
    assert response.json()["revision"] == 2
    assert response.json()["segments"][0]["text"] == "Edited"
    assert response.json()["renditions"][0]["segments"][0]["text"] == "Edited"


def test_a_stale_revision_is_409_and_changes_nothing(api_a, sandbox_a):
    created = create(api_a, text="Draft", destinations=[{"account": sandbox_a.pk}]).json()
    api_a.patch(f"{URL}/{created['id']}", {"revision": 1, "text": "First edit"})

    response = api_a.patch(f"{URL}/{created['id']}", {"revision": 1, "text": "Second edit"})

    assert response.status_code == 409
    err = error(response)
    assert err["code"] == "REVISION_CONFLICT"
    assert err["details"] == {"current_revision": 2, "expected_revision": 1}
    assert Publication.objects.get().segments.get().text == "First edit"


def test_an_edit_without_the_revision_is_400(api_a):
    created = create(api_a, text="Draft").json()
    response = api_a.patch(f"{URL}/{created['id']}", {"text": "Edited"})
    assert response.status_code == 400
    assert "revision" in error(response)["details"]


def test_rescheduling_earlier_moves_the_publish_job(api_a, sandbox_a):
    created = create(
        api_a,
        text="Later",
        destinations=[{"account": sandbox_a.pk}],
        scheduled_at=later(days=2),
        status="scheduled",
    ).json()
    rendition_id = created["renditions"][0]["id"]
    earlier = timezone.now() + timedelta(hours=1)

    response = api_a.patch(
        f"{URL}/{created['id']}", {"revision": created["revision"], "scheduled_at": earlier}
    )

    assert response.status_code == 200, response.json()
    assert datetime.fromisoformat(response.json()["renditions"][0]["scheduled_at"]) == earlier
    assert publish_job(rendition_id).run_at == earlier
    assert Job.objects.filter(dedupe_key=publish_dedupe_key(rendition_id)).count() == 1


def test_scheduling_a_draft_by_edit_needs_the_publish_scope(client_with, sandbox_a):
    writer = client_with("read", "write")
    created = writer.post(
        URL, {"text": "Draft", "destinations": [{"account": sandbox_a.pk}]}, format="json"
    ).json()

    response = writer.patch(
        f"{URL}/{created['id']}", {"revision": 1, "status": "scheduled"}, format="json"
    )

    assert response.status_code == 403
    assert error(response)["code"] == "INSUFFICIENT_SCOPE"
    publisher = client_with("read", "write", "publish")
    response = publisher.patch(
        f"{URL}/{created['id']}", {"revision": 1, "status": "scheduled"}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["status"] == "scheduled"


def test_editing_a_scheduled_publication_needs_the_publish_scope(api_a, client_with, sandbox_a):
    created = create(
        api_a, text="Soon", destinations=[{"account": sandbox_a.pk}], status="scheduled"
    ).json()

    response = client_with("read", "write").patch(
        f"{URL}/{created['id']}", {"revision": created["revision"], "text": "x"}, format="json"
    )

    assert response.status_code == 403


# --- cancel and retry -----------------------------------------------------------------------


def test_cancel_leaves_published_destinations_alone(api_a, workspace_a, sandbox_a, sandbox_a2):
    created = create(
        api_a,
        text="Two places",
        destinations=[{"account": sandbox_a.pk}, {"account": sandbox_a2.pk}],
        scheduled_at=later(hours=3),
        status="scheduled",
    ).json()
    done_id, pending_id = (r["id"] for r in created["renditions"])
    Rendition.objects.filter(pk=done_id).update(
        status="published", published_at=timezone.now(), provider_post_id="live-1"
    )

    response = api_a.delete(f"{URL}/{created['id']}")

    assert response.status_code == 200
    statuses = {r["id"]: r["status"] for r in response.json()["renditions"]}
    assert statuses == {done_id: "published", pending_id: "cancelled"}
    assert Rendition.objects.get(pk=done_id).provider_post_id == "live-1"
    assert not Job.objects.filter(
        dedupe_key=publish_dedupe_key(pending_id), status="pending"
    ).exists()


def test_retry_sends_failed_destinations_again(api_a, workspace_a):
    publication = PublicationFactory(workspace=workspace_a, status="failed")
    failed = RenditionFactory(
        publication=publication,
        status="failed",
        last_error=normalize_error({"kind": "content_rejected", "message": "No."}),
    )

    response = api_a.post(f"{URL}/{publication.pk}/retry")

    assert response.status_code == 200
    assert response.json()["renditions"][0]["status"] == "scheduled"
    failed.refresh_from_db()
    assert failed.manual_retry_count == 1
    assert publish_job(failed.pk).run_at <= timezone.now()


def test_retry_with_nothing_failed_is_409(api_a, workspace_a):
    publication = PublicationFactory(workspace=workspace_a)
    RenditionFactory(publication=publication, status="published", published_at=timezone.now())
    response = api_a.post(f"{URL}/{publication.pk}/retry")
    assert response.status_code == 409
    assert error(response)["code"] == "NOT_RETRYABLE"


def test_retry_stops_at_the_manual_limit(api_a, workspace_a):
    publication = PublicationFactory(workspace=workspace_a, status="failed")
    RenditionFactory(
        publication=publication,
        status="failed",
        manual_retry_count=6,
        last_error=normalize_error({"kind": "content_rejected", "message": "No."}),
    )
    response = api_a.post(f"{URL}/{publication.pk}/retry")
    assert response.status_code == 409
    assert error(response)["code"] == "MANUAL_RETRY_LIMIT"


def test_retry_needs_the_publish_scope(client_with, workspace_a):
    publication = PublicationFactory(workspace=workspace_a)
    response = client_with("read", "write").post(f"{URL}/{publication.pk}/retry")
    assert response.status_code == 403


# --- validate -------------------------------------------------------------------------------


def test_validate_reports_every_problem_and_creates_nothing(api_a, sandbox_a):
    response = api_a.post(
        f"{URL}/validate",
        {"segments": [{"text": "x" * 501}], "destinations": [{"account": sandbox_a.pk}]},
        format="json",
    )

    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is False
    (problem,) = body["problems"]
    assert problem["path"] == "destinations.0.segments.0.text"
    assert problem["code"] == "TEXT_TOO_LONG"
    assert problem["limit"] == 500
    assert problem["actual"] == 501
    assert not Publication.objects.exists()
    assert not Rendition.objects.exists()


def test_validate_a_good_body_is_valid(api_a, sandbox_a):
    response = api_a.post(
        f"{URL}/validate",
        {"text": "Fine", "destinations": [{"account": sandbox_a.pk}], "status": "scheduled"},
        format="json",
    )
    assert response.json() == {"valid": True, "problems": []}
    assert not Job.objects.exists()


@pytest.mark.parametrize(
    ("body", "path", "code"),
    [
        (
            {"text": "Hi", "scheduled_at": "2020-01-01T00:00:00Z"},
            "scheduled_at",
            "SCHEDULE_IN_PAST",
        ),
        (
            {"text": "Hi", "destinations": [{"account": 999999999}]},
            "destinations.0.account",
            "NOT_FOUND",
        ),
        ({"segments": []}, "segments", "VALIDATION_ERROR"),
    ],
)
def test_validate_answers_each_problem_with_path_and_code(api_a, body, path, code):
    response = api_a.post(f"{URL}/validate", body, format="json")
    assert response.status_code == 200
    problems = response.json()["problems"]
    assert {(p["path"], p["code"]) for p in problems} >= {(path, code)}, problems


def test_validate_refuses_a_body_that_does_not_fit_the_schema(api_a):
    response = api_a.post(f"{URL}/validate", {"text": "Hi", "colour": "red"}, format="json")
    assert response.status_code == 400
    assert error(response)["code"] == "UNKNOWN_FIELD"
    assert error(response)["details"] == {"colour": ["Unknown field."]}


def test_validate_reports_a_taken_reference_key(api_a, workspace_a):
    existing = PublicationFactory(workspace=workspace_a, reference_key="k-1")
    response = api_a.post(f"{URL}/validate", {"text": "Hi", "reference_key": "k-1"}, format="json")
    (problem,) = response.json()["problems"]
    assert problem["code"] == "REFERENCE_KEY_EXISTS"
    assert problem["path"] == "reference_key"
    assert str(existing.pk) not in problem["path"]


def test_a_boolean_setting_given_as_text_is_refused_before_scheduling(api_a, workspace_a):
    youtube = SocialAccountFactory(workspace=workspace_a, platform="youtube")
    video = MediaAssetFactory(
        workspace=workspace_a, kind="video", mime_type="video/mp4", duration_s=30
    )

    response = create(
        api_a,
        segments=[{"text": "A description", "media": [{"id": video.pk}]}],
        destinations=[
            {"account": youtube.pk, "settings": {"title": "A title", "made_for_kids": "false"}}
        ],
        scheduled_at=later(hours=2),
        status="scheduled",
    )

    assert response.status_code == 400
    err = error(response)
    assert err["code"] == "VALIDATION_ERROR"
    assert err["details"] == {
        "destinations.0.settings.made_for_kids": ["made_for_kids must be true or false."]
    }
    assert not Publication.objects.exists()

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from apps.api import idempotency
from apps.api.jobs import IDEMPOTENCY_PRUNE
from apps.api.models import IdempotencyRecord
from apps.api.views import publications as views
from apps.jobs.registry import get_job_type
from apps.publications.models import Publication
from tests.api.helpers import bearer, error

URL = "/api/v1/publications"


def post(client, body, key="key-1"):
    return client.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_the_same_key_and_body_replay_the_stored_response(api_a):
    first = post(api_a, {"text": "Once"})
    again = post(api_a, {"text": "Once"})

    assert first.status_code == 201
    assert again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == {**first.json(), "replayed": True}
    assert Publication.objects.count() == 1


def test_key_order_and_whitespace_in_the_body_do_not_matter(api_a):
    post(api_a, {"text": "Once", "reference_key": "r1"})
    again = api_a.post(
        URL,
        b'{ "reference_key" : "r1",\n "text": "Once" }',
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="key-1",
    )
    assert again.status_code == 200
    assert Publication.objects.count() == 1


def test_the_same_key_with_another_body_is_409(api_a):
    post(api_a, {"text": "Once"})

    response = post(api_a, {"text": "Something else"})

    assert response.status_code == 409
    err = error(response)
    assert err["code"] == "IDEMPOTENCY_CONFLICT"
    assert err["details"]["key"] == "key-1"
    assert Publication.objects.count() == 1


def test_the_same_key_on_another_endpoint_is_409(api_a):
    post(api_a, {"text": "Once"})
    response = api_a.post(
        "/api/v1/tokens", {"name": "t", "scopes": ["read"]}, HTTP_IDEMPOTENCY_KEY="key-1"
    )
    assert response.status_code == 409


def test_a_failed_request_stores_nothing_and_its_key_can_be_used_again(api_a):
    refused = post(api_a, {"text": "Once", "status": "later"})
    assert refused.status_code == 400
    assert not IdempotencyRecord.objects.exists()

    assert post(api_a, {"text": "Once"}).status_code == 201


def test_keys_belong_to_a_workspace(api_a, api_b):
    assert post(api_a, {"text": "Once"}).status_code == 201
    assert post(api_b, {"text": "Once"}).status_code == 201
    assert Publication.objects.count() == 2


def test_a_key_past_the_retention_window_runs_again(api_a, settings):
    post(api_a, {"text": "Once"})
    IdempotencyRecord.objects.update(created_at=timezone.now() - timedelta(hours=25))

    response = post(api_a, {"text": "Once"})

    assert response.status_code == 201
    assert Publication.objects.count() == 2
    assert IdempotencyRecord.objects.get().created_at > timezone.now() - timedelta(minutes=1)


def test_an_unusable_key_is_400(api_a):
    response = post(api_a, {"text": "Once"}, key="x" * 256)
    assert response.status_code == 400
    assert error(response)["code"] == "INVALID_IDEMPOTENCY_KEY"
    assert not Publication.objects.exists()


def test_other_posts_replay_too(api_a):
    first = api_a.post(
        "/api/v1/tokens", {"name": "t", "scopes": ["read"]}, HTTP_IDEMPOTENCY_KEY="tok"
    )
    again = api_a.post(
        "/api/v1/tokens", {"name": "t", "scopes": ["read"]}, HTTP_IDEMPOTENCY_KEY="tok"
    )
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]


def test_a_new_tokens_secret_is_never_stored_nor_replayed(api_a):
    body = {"name": "t", "scopes": ["read"]}
    first = api_a.post("/api/v1/tokens", body, HTTP_IDEMPOTENCY_KEY="tok-secret")
    again = api_a.post("/api/v1/tokens", body, HTTP_IDEMPOTENCY_KEY="tok-secret")

    secret = first.json()["token"]
    assert secret
    assert again.json()["token"] is None
    assert again.json()["id"] == first.json()["id"]
    stored = IdempotencyRecord.objects.get(key="tok-secret").response_body
    assert stored["token"] is None
    assert secret not in str(stored)


def test_pruning_deletes_records_past_the_window(api_a, settings):
    settings.IDEMPOTENCY_RETENTION_HOURS = 1
    post(api_a, {"text": "Old"}, key="old")
    post(api_a, {"text": "New"}, key="new")
    IdempotencyRecord.objects.filter(key="old").update(
        created_at=timezone.now() - timedelta(hours=2)
    )

    assert idempotency.idempotency_records_prune() == 1

    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["new"]


def test_pruning_is_a_periodic_job():
    job_type = get_job_type(IDEMPOTENCY_PRUNE)
    assert job_type.periodic_every == timedelta(hours=1)


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_requests_with_one_key_create_one_publication(
    workspace_a, make_token, monkeypatch
):
    clear = make_token(workspace_a).clear
    real_create = views.publication_create

    def slow_create(**kwargs):
        # Hold the key's row lock long enough for the other request to arrive.
        time.sleep(0.5)
        return real_create(**kwargs)

    monkeypatch.setattr(views, "publication_create", slow_create)
    start = threading.Barrier(2)
    responses = []

    def send() -> None:
        try:
            start.wait()
            responses.append(post(bearer(clear), {"text": "Only once"}, key="race"))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(r.status_code for r in responses) == [200, 201]
    replay = next(r for r in responses if r.status_code == 200)
    created = next(r for r in responses if r.status_code == 201)
    assert replay.json() == {**created.json(), "replayed": True}
    assert Publication.objects.count() == 1


def test_a_create_refused_by_the_quota_after_its_record_is_written_leaves_nothing(api_a, org_a):
    """With a key, the create's quota is counted last, after the key's record is written:
    a refusal there rolls back the record with the publication, so the same key can be
    sent again once the quota allows."""
    assert post(api_a, {"text": "First"}, key="first").status_code == 201
    org_a.monthly_post_quota = 1
    org_a.save()

    refused = post(api_a, {"text": "Second"}, key="second")

    assert error(refused)["code"] == "MONTHLY_QUOTA_EXCEEDED"
    assert Publication.objects.count() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["first"]
    org_a.monthly_post_quota = 2
    org_a.save()
    assert post(api_a, {"text": "Second"}, key="second").status_code == 201

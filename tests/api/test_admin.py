from django.urls import reverse

from apps.api.models import IdempotencyRecord


def test_the_idempotency_record_changelist_renders(admin_client, workspace_a):
    record = IdempotencyRecord.objects.create(
        workspace=workspace_a,
        key="k-1",
        fingerprint="0" * 64,
        method="POST",
        path="/api/v1/publications",
        response_status=201,
        response_body={"id": 1},
    )

    response = admin_client.get(reverse("admin:api_idempotencyrecord_changelist"))

    assert response.status_code == 200
    assert b"k-1" in response.content
    detail = admin_client.get(reverse("admin:api_idempotencyrecord_change", args=[record.pk]))
    assert detail.status_code == 200

"""An organization's workspaces share a media storage quota: an upload that would pass it
is refused (409 STORAGE_QUOTA_EXCEEDED in the API, a message in the composer), nothing is
stored, and the usage page shows what is used."""

import io
import os

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image

from apps.accounts.models import Organization
from apps.common.errors import QuotaExceeded
from apps.publications.models import MediaAsset
from apps.publications.services import media_asset_create
from apps.sandbox.services import sandbox_account_create
from tests.factories import WorkspaceFactory

pytestmark = pytest.mark.django_db


def png(pad: int = 0) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(buffer, format="PNG")
    return buffer.getvalue() + b"\0" * pad


def stored_files() -> set[str]:
    from django.conf import settings

    root = settings.MEDIA_ROOT
    return (
        {os.path.join(d, f) for d, _, files in os.walk(root) for f in files}
        if os.path.isdir(root)
        else set()
    )


@pytest.fixture
def small_quota(org_a, workspace_a):
    org_a.storage_quota_bytes = 5_000
    org_a.save()
    return org_a


def test_new_organizations_get_the_configured_quota(settings, db):
    settings.ORGANIZATION_STORAGE_QUOTA_BYTES = 123_456
    assert Organization.objects.create(name="New", slug="new").storage_quota_bytes == 123_456


def test_the_api_refuses_an_upload_past_the_quota(api_a, small_quota, workspace_a):
    other_workspace = WorkspaceFactory(organization=small_quota, slug="ws-a2")
    media_asset_create(workspace=other_workspace, file=ContentFile(png(3_000), name="a.png"))
    before = stored_files()

    response = api_a.post(
        "/api/v1/media",
        {"file": SimpleUploadedFile("b.png", png(2_500))},
        format="multipart",
    )

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "STORAGE_QUOTA_EXCEEDED"
    assert error["details"]["quota_bytes"] == 5_000
    assert "storage is full" in error["message"]
    assert MediaAsset.objects.count() == 1
    assert stored_files() == before

    fits = api_a.post(
        "/api/v1/media", {"file": SimpleUploadedFile("c.png", png(100))}, format="multipart"
    )
    assert fits.status_code == 201


def test_the_check_after_storing_sees_what_others_stored_meanwhile(
    small_quota, workspace_a, monkeypatch
):
    """Two uploads that fit alone but not together: the one that stores second is refused
    by the check under the lock, even though it passed the check before storing."""
    from apps.publications.services import media as media_service

    media_asset_create(workspace=workspace_a, file=ContentFile(png(3_000), name="a.png"))
    real = media_service._check_storage_quota
    calls = []

    def first_check_sees_an_empty_organization(organization, *, adding):
        calls.append(adding)
        if len(calls) == 1:
            return None  # as if the other upload had not committed yet
        return real(organization, adding=adding)

    monkeypatch.setattr(
        media_service, "_check_storage_quota", first_check_sees_an_empty_organization
    )
    before = stored_files()
    with pytest.raises(QuotaExceeded):
        media_asset_create(workspace=workspace_a, file=ContentFile(png(2_500), name="b.png"))
    assert MediaAsset.objects.count() == 1
    assert stored_files() == before


def test_a_zero_quota_means_no_limit(org_a, workspace_a):
    org_a.storage_quota_bytes = 0
    org_a.save()
    media_asset_create(workspace=workspace_a, file=ContentFile(png(50_000), name="a.png"))
    assert MediaAsset.objects.count() == 1


def test_the_composer_says_the_storage_is_full(alice, small_quota, workspace_a):
    media_asset_create(workspace=workspace_a, file=ContentFile(png(4_000), name="a.png"))
    account = sandbox_account_create(workspace=workspace_a, handle="news")
    client = Client()
    client.force_login(alice)

    response = client.post(
        "/w/ws-a/compose/",
        {
            "segment_count": "1",
            "segment-0-text": "Kept",
            "destinations": [str(account.pk)],
            "op": "upload",
            "segment-0-file": SimpleUploadedFile("b.png", png(2_000)),
        },
        HTTP_HX_REQUEST="true",
    )

    page = response.content.decode()
    assert response.status_code == 400
    assert "b.png: Your organization&#x27;s media storage is full" in page
    assert MediaAsset.objects.count() == 1


def test_the_usage_page_shows_the_storage_used(alice, small_quota, workspace_a):
    asset = media_asset_create(workspace=workspace_a, file=ContentFile(png(1_000), name="a.png"))
    client = Client()
    client.force_login(alice)

    page = client.get("/o/org-a/").content.decode()

    assert "Media storage" in page
    assert f'max="5000" value="{asset.size_bytes}"' in page

"""Storing uploaded media through Django's storage API (local disk or S3)."""

from __future__ import annotations

import hashlib
import os

from django.conf import settings
from django.core.files import File
from django.db import connection, transaction
from django.db.models import Sum

from apps.accounts.models import Organization, User, Workspace
from apps.common.errors import QuotaExceeded, ValidationFailed
from apps.publications import constants
from apps.publications.media_probe import probe
from apps.publications.models import MediaAsset
from apps.publications.uploads import store_upload

CHUNK = 1024 * 1024
# First key of the advisory lock that serializes one organization's quota checks.
_STORAGE_LOCK = 7301


def organization_storage_used(organization: Organization) -> int:
    """Bytes of media stored by the organization's workspaces (what its quota counts)."""
    used = MediaAsset.objects.filter(workspace__organization=organization).aggregate(
        total=Sum("size_bytes")
    )["total"]
    return used or 0


def _check_storage_quota(organization: Organization, *, adding: int) -> None:
    """QuotaExceeded STORAGE_QUOTA_EXCEEDED when `adding` more bytes would pass the
    organization's storage quota (0: no limit)."""
    quota = organization.storage_quota_bytes
    if not quota:
        return
    used = organization_storage_used(organization)
    if used + adding > quota:
        raise QuotaExceeded(
            f"Your organization's media storage is full: {used} of {quota} bytes are in use "
            f"and this file needs {adding}. Delete media you no longer need, or ask for a "
            "larger quota.",
            code="STORAGE_QUOTA_EXCEEDED",
            details={"used_bytes": used, "quota_bytes": quota, "file_bytes": adding},
        )


def _size(file: File) -> int:
    size = getattr(file, "size", None)
    if size is None:
        file.seek(0, os.SEEK_END)
        size = file.tell()
        file.seek(0)
    return size


@transaction.atomic
def media_asset_create(
    *,
    workspace: Workspace,
    file: File,
    created_by: User | None = None,
    alt_text: str = "",
    original_name: str = "",
) -> MediaAsset:
    """Store an uploaded file as a media asset of the workspace.

    The type is sniffed from the content (MEDIA_TYPE_UNSUPPORTED otherwise); files over
    MEDIA_MAX_UPLOAD_BYTES are refused (MEDIA_TOO_LARGE), and so are files that would take
    the organization past its storage quota (QuotaExceeded STORAGE_QUOTA_EXCEEDED). The
    bytes go to the default storage under a random name; if the row cannot be written, the
    stored file is removed, and a full disk is InsufficientStorage with nothing kept.
    """
    limit = settings.MEDIA_MAX_UPLOAD_BYTES
    size = _size(file)
    if size == 0:
        raise ValidationFailed("The file is empty.", details={"file": ["The file is empty."]})
    if size > limit:
        raise ValidationFailed(
            f"The file is {size} bytes; uploads are limited to {limit} bytes.",
            code="MEDIA_TOO_LARGE",
            details={"file": [f"Larger than {limit} bytes."]},
        )
    if not isinstance(alt_text, str) or len(alt_text) > constants.MAX_ALT_TEXT_LENGTH:
        raise ValidationFailed(
            "The alt text is too long.",
            details={"alt_text": [f"At most {constants.MAX_ALT_TEXT_LENGTH} characters."]},
        )
    organization = workspace.organization
    # Checked before storing (the common refusal costs no upload to storage), and again
    # below under a lock, against what concurrent uploads committed meanwhile.
    _check_storage_quota(organization, adding=size)
    found = probe(file)
    digest = hashlib.sha256()
    file.seek(0)
    for chunk in iter(lambda: file.read(CHUNK), b""):
        digest.update(chunk)
    file.seek(0)

    name = original_name or os.path.basename(getattr(file, "name", "") or "")
    asset = MediaAsset(
        workspace=workspace,
        original_name=name[:255],
        kind=found.kind,
        mime_type=found.mime_type,
        size_bytes=size,
        width=found.width,
        height=found.height,
        duration_s=found.duration_s,
        sha256=digest.hexdigest(),
        alt_text=alt_text,
        created_by=created_by,
    )
    store_upload(asset.file, file)  # whole or not at all (a full disk: 507)
    try:
        asset.full_clean(exclude=["workspace", "created_by"])
        asset.save()
        if organization.storage_quota_bytes:
            # Held to the commit, only by the uploads of this organization: of two uploads
            # that each fit alone but not together, the second sees the first and is refused.
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_xact_lock(%s, %s)", [_STORAGE_LOCK, organization.pk % 2**31]
                )
            _check_storage_quota(organization, adding=0)
    except Exception:
        if asset.file.name:  # store_upload named it
            asset.file.storage.delete(asset.file.name)
        raise
    return asset

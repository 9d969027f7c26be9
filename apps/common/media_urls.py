"""Signed, expiring URLs for media that platforms fetch by URL.

On S3-compatible storage the URL is the storage's presigned URL, so the bucket stays private.
On any other storage it points at `serve_signed_media` on this site: the file name and an
expiry instant are signed with django.core.signing (SECRET_KEY), and the view checks both
before streaming the file from the default storage.
"""

import mimetypes
import time
from typing import TYPE_CHECKING, TypeGuard

from django.conf import settings
from django.core import signing
from django.core.files.storage import Storage, default_storage
from django.db.models.fields.files import FieldFile
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.views.decorators.http import require_safe

if TYPE_CHECKING:
    from storages.backends.s3 import S3Storage

_SALT = "apps.common.media_urls"


def signed_media_url(
    file: FieldFile | str, expires_s: int, *, storage: Storage | None = None
) -> str:
    """An absolute URL that serves `file` for `expires_s` seconds, then stops working.

    `file` is a FileField value (its own storage is used) or a name in `storage` (default:
    the default storage).
    """
    if isinstance(file, FieldFile):
        name, storage = file.name, storage or file.storage
    else:
        name = file
    storage = storage or default_storage
    if not name:
        raise ValueError("There is no file to sign a URL for.")
    if expires_s < 1:
        raise ValueError("expires_s must be at least 1 second.")
    if _is_s3(storage):
        return storage.url(name, expire=expires_s)
    token = signing.dumps(
        {"name": name, "exp": int(time.time()) + expires_s}, salt=_SALT, compress=True
    )
    return settings.SITE_URL.rstrip("/") + reverse("signed-media", args=[token])


def _is_s3(storage: Storage) -> TypeGuard["S3Storage"]:
    from storages.backends.s3 import S3Storage

    return isinstance(storage, S3Storage)  # a LazyObject reports its wrapped class


@require_safe
def serve_signed_media(request: HttpRequest, token: str) -> HttpResponseBase:
    """Streams the named file while the signature holds and the expiry has not passed."""
    try:
        payload = signing.loads(token, salt=_SALT)
    except signing.BadSignature as exc:
        raise Http404 from exc
    remaining = int(payload["exp"] - time.time())
    if remaining <= 0:
        return HttpResponse("This media link has expired.", status=410, content_type="text/plain")
    try:
        handle = default_storage.open(payload["name"], "rb")
    except (FileNotFoundError, IsADirectoryError) as exc:
        raise Http404 from exc
    content_type = mimetypes.guess_type(payload["name"])[0] or "application/octet-stream"
    response = FileResponse(handle, content_type=content_type)
    response["Cache-Control"] = f"private, max-age={remaining}"
    # An uploaded SVG or HTML file must not run script on this site's origin.
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response

"""ASGI entry point: Django, with the MCP endpoint at /mcp.

Every web process serves it: ``gunicorn -c deploy/gunicorn.conf.py`` runs it with uvicorn
workers (apps.ops.asgi_worker), as ``manage.py serve`` does. The WSGI entry point
(``config.wsgi``) serves everything but /mcp. Here too everything but /mcp is served by
Django's WSGI handler, run by a2wsgi in a pool of threads per process, behind the limits
of apps.ops.request_limits (a ceiling on each path's body, a body-read timeout, header
hygiene).
"""

import os
from typing import cast

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Django is set up first: the MCP tools import models and serializers.
django_wsgi = get_wsgi_application()

from a2wsgi import WSGIMiddleware  # noqa: E402
from django.conf import settings  # noqa: E402
from starlette.types import ASGIApp  # noqa: E402

from apps.api.mcp.app import with_mcp  # noqa: E402
from apps.ops.request_limits import (  # noqa: E402
    MULTIPART_OVERHEAD_BYTES,
    Ceiling,
    Ceilings,
    RequestLimits,
    media_ceiling,
    rest_ceiling,
    web_threads,
)
from apps.web.csv_import import MAX_FILE_BYTES as CSV_MAX_FILE_BYTES  # noqa: E402


def _csv_ceiling() -> Ceiling:
    return Ceiling("csv import", CSV_MAX_FILE_BYTES + MULTIPART_OVERHEAD_BYTES, upload=True)


def _sandbox_ceiling() -> Ceiling:
    return Ceiling(
        "sandbox upload", settings.SANDBOX_MEDIA_MAX_BYTES + MULTIPART_OVERHEAD_BYTES, upload=True
    )


def _bulk_ceiling() -> Ceiling:
    # Bulk creates are JSON: the API's JSON parser holds them to the same limit.
    return Ceiling("bulk", settings.DATA_UPLOAD_MAX_MEMORY_SIZE)


# The views that take files, and bulk; every other path has rest_ceiling().
CEILINGS = Ceilings(
    {
        "v1:media-list": media_ceiling,  # POST /api/v1/media
        "media-upload": media_ceiling,  # the media library
        "composer": media_ceiling,  # the composer uploads media as it goes
        "composer-check": media_ceiling,
        "publication-edit": media_ceiling,
        "post-import": _csv_ceiling,
        "sandbox-media": _sandbox_ceiling,
        "v1:publication-bulk-list": _bulk_ceiling,
    },
    rest=rest_ceiling,
)


def site_application(wsgi_app=django_wsgi) -> RequestLimits:
    """The site and the API: sync Django code, in a pool of threads (gunicorn's --threads),
    each request's body streaming to it as it arrives, within the limits."""
    threaded = cast(ASGIApp, WSGIMiddleware(wsgi_app, workers=web_threads()))
    return RequestLimits(threaded, CEILINGS)


application = with_mcp(site_application())

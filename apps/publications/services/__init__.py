"""Writes to publications and media. Every client (web, API, admin, commands) goes through
these functions; see each module's docstring for its contract."""

from apps.publications.services.media import media_asset_create
from apps.publications.services.publications import (
    publication_cancel,
    publication_create,
    publication_reschedule,
    publication_update,
)
from apps.publications.services.status import publication_refresh_status

__all__ = [
    "media_asset_create",
    "publication_cancel",
    "publication_create",
    "publication_refresh_status",
    "publication_reschedule",
    "publication_update",
]

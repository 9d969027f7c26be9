"""Writes that touch a publication and its renditions together. Every client (web, API,
admin, commands, the series materializer) goes through these functions; see each module's
docstring for its contract."""

from apps.publishing.delivery.comment import first_comment_mark_posted, first_comment_retry
from apps.publishing.services.publications import (
    publication_cancel,
    publication_create,
    publication_reschedule,
    publication_update,
)
from apps.publishing.services.renditions import (
    MANUAL_RETRY_LIMIT,
    Resolution,
    RetryRefused,
    publication_retry,
    rendition_cancel,
    rendition_resolve,
    rendition_retry,
)
from apps.publishing.services.status import publication_refresh_status

__all__ = [
    "MANUAL_RETRY_LIMIT",
    "first_comment_mark_posted",
    "first_comment_retry",
    "Resolution",
    "RetryRefused",
    "publication_cancel",
    "publication_create",
    "publication_refresh_status",
    "publication_reschedule",
    "publication_retry",
    "publication_update",
    "rendition_cancel",
    "rendition_resolve",
    "rendition_retry",
]

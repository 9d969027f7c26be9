"""What each event says, and the handlers that turn domain events into webhooks.

The handlers subscribe to ``apps.common.events`` (see ``apps.py``) and run inside the
emitter's transaction, so the event, delivery and job rows commit with the domain write
or not at all. They build the event's data only when some endpoint of the workspace is
subscribed (see ``outbox.emit_lazy``); a bulk create's status changes come as one batch
and are recorded per workspace with one statement per table. Rendition events are
emitted before the publication's status is refreshed, so a receiver's log reads in order:
``rendition.published``, then ``publication.completed``.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

from apps.webhooks import constants
from apps.webhooks.outbox import emit_lazy, emit_lazy_many

if TYPE_CHECKING:
    from apps.accounts.models import SocialAccount
    from apps.publications.models import Publication
    from apps.renditions.models import Rendition

# Publication statuses after which nothing more happens by itself.
TERMINAL_PUBLICATION_STATUSES = frozenset(
    {"published", "partially_published", "failed", "cancelled"}
)
_ERROR_KEYS = ("kind", "code", "http_status", "message", "retryable", "action", "retry_at")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _error(error: dict | None) -> dict | None:
    if not error:
        return None
    return {key: error.get(key) for key in _ERROR_KEYS}


def rendition_data(rendition: Rendition) -> dict:
    account = rendition.social_account
    return {
        "rendition": {
            "id": rendition.pk,
            "publication": rendition.publication_id,
            "account": rendition.social_account_id,
            "platform": rendition.platform,
            "status": rendition.status,
            "scheduled_at": _iso(rendition.effective_scheduled_at),
            "published_at": _iso(rendition.published_at),
            "provider_post_id": rendition.provider_post_id,
            "provider_url": rendition.provider_url,
            "attempts": rendition.attempts,
            "next_retry_at": _iso(rendition.next_retry_at),
            "ambiguous": rendition.ambiguous,
            "error": _error(rendition.last_error),
        },
        "publication": {
            "id": rendition.publication_id,
            "reference_key": rendition.publication.reference_key,
        },
        "account": {"id": account.pk, "platform": account.platform, "handle": account.handle},
    }


def publication_data(publication_id: int) -> dict:
    return publications_data([publication_id])[publication_id]


def publications_data(publication_ids: list[int]) -> dict[int, dict]:
    """Each publication's event data, by id, in two queries."""
    from apps.publications.models import Publication
    from apps.renditions.models import Rendition

    renditions: dict[int, list[dict]] = defaultdict(list)
    for r in (
        Rendition.objects.filter(publication_id__in=publication_ids)
        .order_by("pk")
        .values(
            "id",
            "publication_id",
            "social_account_id",
            "platform",
            "status",
            "provider_url",
            "ambiguous",
            "last_error",
        )
    ):
        renditions[r["publication_id"]].append(
            {
                "id": r["id"],
                "account": r["social_account_id"],
                "platform": r["platform"],
                "status": r["status"],
                "provider_url": r["provider_url"],
                "ambiguous": r["ambiguous"],
                "error": _error(r["last_error"]),
            }
        )
    found = {
        publication.pk: {
            "publication": {
                "id": publication.pk,
                "status": publication.status,
                "revision": publication.revision,
                "scheduled_at": _iso(publication.scheduled_at),
                "timezone": publication.timezone,
                "reference_key": publication.reference_key,
                "renditions": renditions[publication.pk],
            }
        }
        for publication in Publication.objects.filter(pk__in=publication_ids)
    }
    missing = set(publication_ids) - set(found)
    if missing:
        raise Publication.DoesNotExist(f"No publication {sorted(missing)}.")
    return found


def emit_rendition_published(rendition: Rendition) -> None:
    """The rendition is live (published, reconciled, or resolved by a person)."""
    emit_lazy(
        workspace_id=rendition.workspace_id,
        event=constants.RENDITION_PUBLISHED,
        build=lambda: rendition_data(rendition),
    )


def emit_rendition_failure(rendition: Rendition) -> None:
    """After a rendition was marked failed: ``rendition.ambiguous`` when its outcome is
    unknown, ``rendition.failed`` when no automatic retry is pending, nothing otherwise
    (a retry follows, and its outcome gets its own event)."""
    if rendition.ambiguous:
        event = constants.RENDITION_AMBIGUOUS
    elif not rendition.is_retry_pending:
        event = constants.RENDITION_FAILED
    else:
        return
    emit_lazy(
        workspace_id=rendition.workspace_id, event=event, build=lambda: rendition_data(rendition)
    )


def emit_account_needs_reconnect(account: SocialAccount) -> None:
    """The account's token expired or was revoked: a person must reconnect it."""
    emit_lazy(
        workspace_id=account.workspace_id,
        event=constants.ACCOUNT_NEEDS_RECONNECT,
        build=lambda: {
            "account": {
                "id": account.pk,
                "platform": account.platform,
                "handle": account.handle,
                "status": account.status,
            }
        },
    )


def emit_comment_received(comment: Any) -> None:
    """A comment by someone else under one of our posts (the inbox's ``Comment``: its
    ``event_data()`` says what; the inbox app is above this one, so it is not imported)."""
    emit_lazy(
        workspace_id=comment.workspace_id,
        event=constants.COMMENT_RECEIVED,
        build=comment.event_data,
    )


def emit_comment_replied(reply: Any) -> None:
    """A reply sent from the inbox is posted (the inbox's ``Reply``, as above)."""
    emit_lazy(
        workspace_id=reply.workspace_id, event=constants.COMMENT_REPLIED, build=reply.event_data
    )


def emit_post_engagement_reached(rendition: Rendition, *, threshold: int, engagement: int):
    """A published post's engagement (likes + replies + reposts) reached `threshold`: the
    rendition as ``rendition.published`` shows it, and the two numbers."""
    emit_lazy(
        workspace_id=rendition.workspace_id,
        event=constants.POST_ENGAGEMENT_REACHED,
        build=lambda: {
            **rendition_data(rendition),
            "engagement": {"threshold": threshold, "value": engagement},
        },
    )


def emit_publication_review_change(publication: Publication, *, review: str, actor, note: str):
    """``publication.review_requested``, ``publication.approved``,
    ``publication.changes_requested`` or ``publication.on_hold``: the publication, who
    acted (None for a client through a client link) and what they wrote."""
    actor_data = {"id": actor.pk, "name": actor.name, "email": actor.email} if actor else None

    def build() -> dict:
        data = publication_data(publication.pk)
        data["review"] = {"state": review, "actor": actor_data, "note": note}
        return data

    emit_lazy(
        workspace_id=publication.workspace_id, event=constants.REVIEW_EVENTS[review], build=build
    )


def emit_publication_status_change(publication: Publication, *, previous: str, status: str) -> None:
    """``publication.scheduled`` when the aggregate becomes scheduled (from a draft, or a
    failure retried by a person), and ``publication.completed`` when it becomes terminal;
    called only on a change."""
    event = _publication_event(previous=previous, status=status)
    if event is None:
        return
    emit_lazy(
        workspace_id=publication.workspace_id,
        event=event,
        build=lambda: publication_data(publication.pk),
    )


def emit_publication_status_changes(payloads: list[dict[str, Any]]) -> None:
    """``emit_publication_status_change`` for each payload of a batch, with one endpoint
    lookup and one statement per table for each workspace."""
    by_workspace: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for payload in payloads:
        event = _publication_event(previous=payload["previous"], status=payload["status"])
        if event is not None:
            publication = payload["publication"]
            by_workspace[publication.workspace_id].append((event, publication.pk))
    for workspace_id, events in by_workspace.items():
        emit_lazy_many(workspace_id=workspace_id, events=events, build=publications_data)


def _publication_event(*, previous: str, status: str) -> str | None:
    if status == previous:
        return None
    if status == "scheduled" and previous != "publishing":
        # (publishing -> scheduled is a worker handing work back at shutdown: no news.)
        return constants.PUBLICATION_SCHEDULED
    if status in TERMINAL_PUBLICATION_STATUSES:
        return constants.PUBLICATION_COMPLETED
    return None

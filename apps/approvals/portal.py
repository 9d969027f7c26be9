"""Client links: a workspace admin lets someone without an account (an agency's client)
review posts through a signed, expiring, revocable link (see ``PortalLink``).

A link's token is ``<id>.<secret>`` signed with the site's key (``django.core.signing``):
a forged or altered token fails the signature before any row is read; the secret is then
compared, in constant time, with the SHA-256 kept on the row, so a leaked database does
not yield working links. What the client decides goes through the review workflow
(``apps.publishing.services.reviews``) with the powers of the member who made the link,
as long as that member may still approve posts; it is recorded as the client's.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import User, Workspace
from apps.approvals.models import PortalLink
from apps.approvals.rule import is_approver
from apps.common import events
from apps.common.errors import DomainError, NotFound, PermissionDenied, ValidationFailed
from apps.publications.models import Publication

_SALT = "apps.approvals.portal"
MAX_LIFETIME = timedelta(days=90)
MAX_PUBLICATIONS = 200
# The most posts a link's page lists (the oldest planned first).
PAGE_SIZE = 100


class PortalLinkRefused(DomainError):
    """The link does not open: unknown or forged (404), expired or revoked (410)."""

    code = "PORTAL_LINK_INVALID"
    http_status = 404


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def portal_token(link: PortalLink, secret: str) -> str:
    return signing.Signer(salt=_SALT).sign(f"{link.pk}.{secret}")


def portal_url(token: str) -> str:
    return settings.SITE_URL.rstrip("/") + reverse("portal", args=[token])


def _check_period(start: datetime | None, end: datetime | None) -> None:
    if start is not None and end is not None and end <= start:
        raise ValidationFailed(
            "The period ends before it starts.", details={"period_end": ["After the start."]}
        )


def _check_expiry(expires_at: datetime, now: datetime) -> None:
    if expires_at <= now or expires_at > now + MAX_LIFETIME:
        message = f"A link expires within {MAX_LIFETIME.days} days from now."
        raise ValidationFailed(message, details={"expires_at": [message]})


def _label(label: str) -> str:
    text = (label or "").strip()
    if not text or len(text) > 100:
        message = "Say who the link is for (at most 100 characters)."
        raise ValidationFailed(message, details={"label": [message]})
    return text


def _scoped(workspace: Workspace, ids: Sequence[int]) -> list[Publication]:
    wanted = set(ids)
    if len(wanted) > MAX_PUBLICATIONS:
        message = f"At most {MAX_PUBLICATIONS} posts per link."
        raise ValidationFailed(message, details={"publications": [message]})
    found = list(Publication.objects.for_workspace(workspace).filter(pk__in=wanted))
    missing = sorted(wanted - {p.pk for p in found})
    if missing:
        raise NotFound("No such posts in this workspace.", details={"publications": missing})
    return found


@transaction.atomic
def portal_link_create(
    *,
    workspace: Workspace,
    actor: User | None,
    label: str,
    expires_at: datetime,
    publications: Sequence[int] = (),
    period_start: datetime | None = None,
    period_end: datetime | None = None,
) -> tuple[PortalLink, str]:
    """Make a link for ``label`` and return it with its token (shown once: only its
    hash is kept). Only someone who may approve the workspace's posts makes one
    (PermissionDenied otherwise, and for work without a person: a link acts with its
    maker's powers); ``publications`` must be the workspace's (NotFound)."""
    if not is_approver(actor, workspace):
        raise PermissionDenied(
            "Only a workspace admin shares posts with a client.",
            details={"workspace": workspace.slug},
        )
    text = _label(label)
    _check_expiry(expires_at, timezone.now())
    _check_period(period_start, period_end)
    posts = _scoped(workspace, publications)
    secret = secrets.token_urlsafe(24)
    link = PortalLink(
        workspace=workspace,
        label=text,
        secret_hash=_hash(secret),
        period_start=period_start,
        period_end=period_end,
        expires_at=expires_at,
        created_by=actor,
    )
    link.full_clean(exclude=["secret_hash"])
    link.save()
    link.publications.set(posts)
    events.emit(events.PORTAL_LINK_CREATED, link=link, actor=actor)
    return link, portal_token(link, secret)


@transaction.atomic
def portal_link_revoke(*, link: PortalLink, actor: User | None) -> PortalLink:
    """Stop the link at once; revoking a revoked link changes nothing."""
    locked = PortalLink.objects.select_for_update().get(pk=link.pk)
    if locked.revoked_at is None:
        locked.revoked_at = timezone.now()
        locked.revoked_by = actor
        locked.save(update_fields=["revoked_at", "revoked_by", "updated_at"])
        events.emit(events.PORTAL_LINK_REVOKED, link=locked, actor=actor)
    return locked


def _refused(message: str, code: str, status: int) -> PortalLinkRefused:
    refusal = PortalLinkRefused(message, code=code)
    refusal.http_status = status
    return refusal


def portal_link_open(token: str) -> PortalLink:
    """The link a token opens, or PortalLinkRefused: PORTAL_LINK_INVALID (unknown,
    forged, or made by someone who may no longer approve), PORTAL_LINK_EXPIRED or
    PORTAL_LINK_REVOKED."""
    try:
        value = signing.Signer(salt=_SALT).unsign(token)
    except signing.BadSignature as exc:
        raise _refused("This link does not work.", "PORTAL_LINK_INVALID", 404) from exc
    pk, _, secret = value.partition(".")
    link = (
        PortalLink.objects.select_related("workspace__organization", "created_by")
        .filter(pk=int(pk) if pk.isdigit() else -1)
        .first()
    )
    if link is None or not hmac.compare_digest(link.secret_hash, _hash(secret)):
        raise _refused("This link does not work.", "PORTAL_LINK_INVALID", 404)
    if link.revoked_at is not None:
        raise _refused("This link was withdrawn.", "PORTAL_LINK_REVOKED", 410)
    if link.is_expired(timezone.now()):
        raise _refused("This link has expired.", "PORTAL_LINK_EXPIRED", 410)
    # Its decisions are made with its maker's powers: those of their role now.
    if link.created_by is None or not is_approver(link.created_by, link.workspace):
        raise _refused("This link does not work any more.", "PORTAL_LINK_INVALID", 404)
    return link


def portal_publications(link: PortalLink) -> QuerySet[Publication]:
    """The posts the link shows: its workspace's that have a review and are not
    cancelled, narrowed to the posts it names and to its period."""
    posts = (
        Publication.objects.for_workspace(link.workspace_id)
        .filter(review__isnull=False)
        .exclude(status=Publication.Status.CANCELLED)
    )
    if link.publications.exists():
        posts = posts.filter(pk__in=link.publications.values("pk"))
    if link.period_start is not None:
        posts = posts.filter(scheduled_at__gte=link.period_start)
    if link.period_end is not None:
        posts = posts.filter(scheduled_at__lt=link.period_end)
    return posts.order_by("scheduled_at", "pk")


def portal_link_viewed(link: PortalLink) -> None:
    """The client opened the link: noted on it and announced (the audit log keeps each
    view)."""
    now = timezone.now()
    PortalLink.objects.filter(pk=link.pk).update(last_used_at=now)
    link.last_used_at = now
    events.emit(events.PORTAL_VIEWED, link=link)

"""What an adapter is handed for one rendition: the publish context (credentials,
settings, checkpoint, idempotency base, the savers it calls back) and a segment's media."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import IO

from django.conf import settings
from django.db import DatabaseError, connection, transaction

from apps.accounts import services as account_services
from apps.accounts.crypto import CredentialsError
from apps.accounts.models import SocialAccount
from apps.common.media_urls import signed_media_url
from apps.providers.base import Adapter, MediaPayload, PublishContext
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.publications.models import MediaAsset
from apps.publishing.locks import RefreshInProgress, account_refresh_lock
from apps.renditions.models import DeliveryAttempt, Rendition, RenditionSegment

logger = logging.getLogger(__name__)


def publish_context(rendition: Rendition, credentials: dict) -> PublishContext:
    return PublishContext(
        account=rendition.social_account,
        credentials=credentials,
        settings=rendition.settings or {},
        rendition_id=rendition.pk,
        idempotency_base=f"rendition-{rendition.pk}",
        checkpoint=dict(rendition.checkpoint or {}),
        checkpoint_saver=lambda checkpoint: write_checkpoint(rendition, checkpoint),
        credentials_saver=lambda fresh: store_refreshed_credentials(
            rendition.social_account, fresh
        ),
        attempted_before=lambda position: _attempted_before(rendition, position),
        unanswered_sent_at=lambda position: _unanswered_sent_at(rendition, position),
    )


def _unanswered_sent_at(rendition: Rendition, position: int) -> list[datetime]:
    """When the segment's publish requests that went unanswered were sent, oldest first."""
    return list(
        rendition.delivery_attempts.filter(
            segment_position=position,
            kind=DeliveryAttempt.Kind.PUBLISH,
            outcome__in=[DeliveryAttempt.Outcome.UNKNOWN, DeliveryAttempt.Outcome.LOST],
        )
        .order_by("started_at")
        .values_list("started_at", flat=True)
    )


def _attempted_before(rendition: Rendition, position: int) -> bool:
    """Whether an earlier publish attempt at this segment ended (the attempt under way, if
    any, is still in flight)."""
    return (
        rendition.delivery_attempts.filter(
            segment_position=position, kind=DeliveryAttempt.Kind.PUBLISH
        )
        .exclude(outcome=DeliveryAttempt.Outcome.IN_FLIGHT)
        .exists()
    )


# Tries at committing refreshed credentials: the platform has already spent the old
# refresh token, so a failed commit is tried again rather than losing the new one.
STORE_ATTEMPTS = 3


def store_refreshed_credentials(account: SocialAccount, fresh: dict) -> None:
    """Persist credentials refreshed by an adapter, and their expiry, under a row lock on
    the account (the one place credentials are written during delivery). The write is a
    transaction of its own (durable: never part of a caller's, whose rollback would take
    the new refresh token with it), tried again on a failed commit."""
    for attempt in range(1, STORE_ATTEMPTS + 1):
        try:
            with transaction.atomic(durable=True):
                locked = SocialAccount.objects.select_for_update().get(pk=account.pk)
                write_refreshed_credentials(locked, fresh)
            break
        except DatabaseError:
            if attempt == STORE_ATTEMPTS:
                logger.exception(
                    "Refreshed credentials of account %s could not be stored; it will need "
                    "reconnecting if the platform rotated its refresh token.",
                    account.pk,
                )
                raise
            connection.close_if_unusable_or_obsolete()
            time.sleep(0.2 * attempt)
    # The caller's copy reads what was stored (a later step of the same run may decrypt it).
    account.token_expires_at = locked.token_expires_at
    account.credentials_key_id = locked.credentials_key_id
    account.credentials_ciphertext = locked.credentials_ciphertext


def fresh_credentials(adapter: Adapter, account_id: int) -> dict:
    """The account's credentials, refreshed first when near expiry. One refresh per account
    at a time (its refresh lock), so two workers never spend one refresh token twice; no
    row lock and no transaction is held while the platform answers. New credentials are
    committed on their own as soon as the platform issued them. Raises RefreshInProgress
    when another worker held the lock too long, ProviderError when the refresh failed."""
    with account_refresh_lock(account_id):
        # Durable: refused inside a caller's transaction before any token is spent.
        with transaction.atomic(durable=True):
            account = SocialAccount.objects.get(pk=account_id)
        credentials = account_services.social_account_credentials(account)
        fresh = adapter.refresh_credentials(account, credentials)
        if fresh is not None:
            store_refreshed_credentials(account, fresh)
    return fresh if fresh is not None else credentials


def credentials_for_call(adapter: Adapter, account_id: int) -> dict:
    """``fresh_credentials`` for a call beside publishing (a first comment, an inbox reply):
    a refresh held by another worker is a retry soon, unreadable credentials need support;
    both as the ProviderError a delivery step records."""
    try:
        return fresh_credentials(adapter, account_id)
    except RefreshInProgress:
        raise ProviderError(
            ErrorKind.NETWORK_BEFORE_SEND,
            "Another worker was refreshing this account's token; trying again in a moment.",
            code="refresh_in_progress",
        ) from None
    except CredentialsError as exc:
        raise ProviderError(
            ErrorKind.UNKNOWN,
            str(exc),
            code="credentials_unreadable",
            action=Action.CONTACT_SUPPORT,
            retryable=False,
        ) from exc


def write_refreshed_credentials(locked: SocialAccount, fresh: dict) -> None:
    """One UPDATE of the locked account: the new credentials and their expiry."""
    expires_at = fresh.get("expires_at")
    if expires_at:
        locked.token_expires_at = datetime.fromisoformat(expires_at)
    account_services.social_account_store_credentials(account=locked, credentials=fresh, save=False)
    locked.save(
        update_fields=[
            "token_expires_at",
            "credentials_key_id",
            "credentials_ciphertext",
            "updated_at",
        ]
    )


def write_checkpoint(rendition: Rendition, checkpoint: dict) -> None:
    """Keep the server-issued handles an adapter recorded (upload sessions, containers):
    written at once and whatever the lease, since they describe the platform."""
    Rendition.objects.filter(pk=rendition.pk).update(checkpoint=checkpoint)
    rendition.checkpoint = dict(checkpoint)


def media_payloads(segment: RenditionSegment) -> list[MediaPayload]:
    payloads = []
    for link in segment.media.select_related("media").order_by("position"):
        asset = link.media
        payloads.append(
            MediaPayload(
                media_id=asset.pk,
                kind=asset.kind,
                mime_type=asset.mime_type,
                size_bytes=asset.size_bytes,
                alt_text=link.alt_text,
                open=_opener(asset),
                width=asset.width,
                height=asset.height,
                public_url=_public_url(asset),
            )
        )
    return payloads


def _opener(asset: MediaAsset) -> Callable[[], IO[bytes]]:
    """Opens a new read handle on the asset's stored file at each call."""
    storage, name = asset.file.storage, asset.file.name
    assert name  # a stored asset's file has its name
    return lambda: storage.open(name, "rb")


def _public_url(asset) -> str:
    """A signed, expiring URL for platforms that fetch media themselves."""
    return signed_media_url(asset.file, settings.MEDIA_URL_EXPIRE_S)

"""The lock order every write of the publish flow follows: the publication row, then the
organization row (quotas), then rendition rows; and the lock one account's token refresh
holds (no row, no transaction)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from django.conf import settings
from django.db import DatabaseError, OperationalError, connection

from apps.common.direct import direct_connect
from apps.publications.models import Publication
from apps.renditions.models import Rendition


def lock_rendition(rendition_id: int) -> Rendition:
    """Lock the publication, then the rendition (the services' lock order)."""
    publication_id = Rendition.objects.values_list("publication_id", flat=True).get(pk=rendition_id)
    Publication.objects.select_for_update().filter(pk=publication_id).first()
    return (
        Rendition.objects.select_for_update(of=("self",))
        .select_related("publication", "social_account", "workspace__organization")
        .get(pk=rendition_id)
    )


# First key of the session advisory lock that serializes one account's token refreshes.
ACCOUNT_REFRESH_LOCK = 0x726672  # "rfr"


class RefreshInProgress(Exception):  # noqa: N818
    """Another process is refreshing this account's token (its lock was not granted in
    time): try again shortly, when the new token is stored."""


@contextmanager
def account_refresh_lock(account_id: int) -> Iterator[None]:
    """Hold the account's refresh lock.

    A session advisory lock instead of the account's row lock: the platform's answer can
    take the whole provider timeout, and a row lock held that long would stall every write
    of the account (a reconnect, a status change) and keep a transaction open. The lock
    ends with the session, so a worker killed mid-refresh releases it. Behind a pooler in
    transaction mode (DATABASE_DIRECT_URL), each statement of the thread's connection may
    run on another server session, which would neither hold nor release the lock: there it
    is held on a session of its own on PostgreSQL itself."""
    key = [ACCOUNT_REFRESH_LOCK, account_id % 2**31]
    if settings.DATABASE_DIRECT is not None:
        with _held_on_a_direct_session(key):
            yield
        return
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", key)  # bounded by lock_timeout
    except OperationalError as exc:
        raise RefreshInProgress(str(exc)) from exc
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)
        except DatabaseError:
            connection.close()  # a broken session holds no lock; a stale one must not stay


@contextmanager
def _held_on_a_direct_session(key: list[int]) -> Iterator[None]:
    try:
        session = direct_connect(application_name="account refresh lock")
    except psycopg.OperationalError as exc:
        raise RefreshInProgress(str(exc)) from exc
    try:
        session.execute("SELECT pg_advisory_lock(%s, %s)", key)  # bounded by lock_timeout
    except psycopg.OperationalError as exc:
        session.close()
        raise RefreshInProgress(str(exc)) from exc
    try:
        yield
    finally:
        # Released before the session ends: its backend lets go of it only once it exits.
        with contextlib.suppress(psycopg.Error):
            session.execute("SELECT pg_advisory_unlock(%s, %s)", key)
        session.close()

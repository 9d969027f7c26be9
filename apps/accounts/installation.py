"""The installation id: stable for the life of the database, new after a reset."""

from __future__ import annotations

from functools import cache

from apps.accounts.models import Installation


@cache
def installation_id() -> str:
    """This installation's id (hex, 32 characters), made on first use if migrations have
    not made it yet."""
    row = Installation.objects.order_by("created_at").first()
    if row is None:
        Installation.objects.get_or_create(pk=Installation().pk)
        row = Installation.objects.earliest("created_at")
    return row.pk.hex

"""Maintenance mode: is it on, and switching it."""

import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, transaction

from apps.ops.models import MaintenanceSwitch

logger = logging.getLogger(__name__)

DEFAULT_MESSAGE = (
    "The service is under maintenance. Nothing you already scheduled is lost: accepted "
    "posts keep publishing. Changes are refused for now; please try again shortly."
)
DEFAULT_RETRY_AFTER_S = 300


@dataclass(frozen=True)
class MaintenanceState:
    is_on: bool
    message: str
    retry_after_s: int
    source: str  # "setting", "admin" or "" when off


# (monotonic deadline, switch row as read or None). Per process: a flip in the admin reaches
# the other processes within MAINTENANCE_CACHE_S, without a query on every write.
_cached: tuple[float, MaintenanceSwitch | None] | None = None


def maintenance_cache_clear() -> None:
    global _cached
    _cached = None


def _switch_row() -> MaintenanceSwitch | None:
    global _cached
    now = time.monotonic()
    if _cached is not None and _cached[0] > now:
        return _cached[1]
    try:
        row = MaintenanceSwitch.objects.filter(pk=MaintenanceSwitch.SINGLETON_PK).first()
    except DatabaseError:
        # Unreachable database or table not migrated yet: the write would fail on its own;
        # don't turn that into a maintenance answer, and don't cache the guess.
        logger.warning("maintenance switch could not be read", exc_info=True)
        return None
    _cached = (now + settings.MAINTENANCE_CACHE_S, row)
    return row


def maintenance_state() -> MaintenanceState:
    """Whether writes are refused now, from the setting or the admin switch (cached briefly)."""
    row = _switch_row()
    message = (row.message if row else "") or DEFAULT_MESSAGE
    retry_after_s = row.retry_after_s if row else DEFAULT_RETRY_AFTER_S
    if settings.MAINTENANCE_MODE:
        return MaintenanceState(True, message, retry_after_s, "setting")
    if row is not None and row.is_enabled:
        return MaintenanceState(True, message, retry_after_s, "admin")
    return MaintenanceState(False, message, retry_after_s, "")


@transaction.atomic
def maintenance_switch_save(*, switch: MaintenanceSwitch) -> MaintenanceSwitch:
    """Validate and store the switch; this process sees the change at once."""
    switch.pk = MaintenanceSwitch.SINGLETON_PK
    switch.full_clean()
    switch.save()
    # Clear now for this request's own reads, and again once the row is visible to others.
    maintenance_cache_clear()
    transaction.on_commit(maintenance_cache_clear)
    logger.warning(
        "maintenance mode switched %s in the admin", "on" if switch.is_enabled else "off"
    )
    return switch


def maintenance_set(
    *, is_enabled: bool, message: str | None = None, retry_after_s: int | None = None
) -> MaintenanceSwitch:
    """Turn the admin switch on or off, optionally changing its message and Retry-After."""
    switch = MaintenanceSwitch.load()
    switch.is_enabled = is_enabled
    if message is not None:
        switch.message = message
    if retry_after_s is not None:
        switch.retry_after_s = retry_after_s
    return maintenance_switch_save(switch=switch)

"""Constants shared by the queue's modules."""

from django.db import models


class Seat(models.TextChoices):
    """The per-organization budget a running job holds a seat of, declared by its type.

    A slow webhook receiver or a long wait on a platform must not take seats from the
    organization's publishing, so each budget is capped and counted on its own.
    """

    PUBLISH = "publish"  # Organization.inflight_cap
    WEBHOOK = "webhook"  # Organization.webhook_inflight_cap
    NONE = "none"  # no seat: claimed without a cap (still fairly, never when suspended)


# The Organization column that caps each budget's jobs in flight (every Seat but NONE).
SEAT_CAP_COLUMNS = {Seat.PUBLISH: "inflight_cap", Seat.WEBHOOK: "webhook_inflight_cap"}

# Wall-clock seconds a handler may run before the worker gives up on it, unless its job
# type declares its own `time_limit_s` (see apps.jobs.timelimits).
DEFAULT_TIME_LIMIT_S = 600.0

# Dead rows in jobs_job after which it is vacuumed (autovacuum's threshold, set by migration
# 0005, and the jobs.vacuum housekeeping job's, for servers where autovacuum is off).
VACUUM_DEAD_ROWS = 5000

# Advisory-lock namespace (first key of the pair, the organization's stripe the second:
# organization id modulo HEADS_LOCK_STRIPES) that guards raising a QueueHead: enqueuers
# hold it shared, the claim takes it exclusively. Striped so that a transaction
# enqueueing for many organizations holds at most HEADS_LOCK_STRIPES locks.
HEADS_LOCK_NAMESPACE = 0x68656164  # "head"
HEADS_LOCK_STRIPES = 1024

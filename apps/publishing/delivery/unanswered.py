"""The rule for a write whose answer may never have come: a first comment, an inbox reply.

Both flows take the same steps, each on its own attempt model (`DeliveryAttempt`,
`ReplyAttempt`, whose outcomes share their names):
1. the send's attempt row is committed before the request leaves;
2. a run that finds the last send without an answer (unanswered, in flight when its worker
   died, or refused because an earlier request under the key still runs) looks the write
   up before anything is sent again;
3. "not found" concludes nothing before RECONCILE_SETTLE_S has passed since that send, on
   the database clock: the platform may still be saving it (Mastodon holds a keyed create
   under its key's lock). Until then the check is scheduled again without spending one of
   the job's attempts;
4. past it, an exact lookup's "not found" proves absence, and the write is sent again.
   Where the platform honours the write's idempotency key (and still remembers it), a
   listing's "not found" sends it again under that key, which cannot make a second one:
   the platform answers with the first, or refuses while that one's create still runs
   (step 2). Otherwise a listing's (it may lag) is asked again on the job's remaining
   attempts, then a person decides. Nothing is ever guessed into a second write;
5. a lookup that fails decides nothing: a throttled one is asked again after the
   platform's reset without spending an attempt, and a write still in doubt when the
   attempts run out goes to a person, never to a plain failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NoReturn, Protocol

from django.conf import settings
from django.db.models import Q, QuerySet

from apps.common.db_clock import db_now
from apps.jobs.errors import RetryableError, Snooze, delay_seconds
from apps.jobs.models import Job
from apps.jobs.registry import get_job_type
from apps.providers.errors import REQUEST_IN_PROGRESS, ErrorKind, ProviderError

# Outcomes shared by both attempt models.
FAILED, UNKNOWN, ABSENT = "failed", "unknown", "absent"
# A send with one of these may have made the write.
IN_DOUBT = ("in_flight", UNKNOWN, "lost")
# What a run lets through untouched: the job comes back to look again.
LOOKS_AGAIN = (RetryableError, Snooze)
# The least wait after a throttled lookup (a reset already past must not spin the check).
THROTTLED_MIN_WAIT_S = 5.0


class Attempt(Protocol):
    started_at: datetime

    def close(self, outcome: str, *, error: dict | None = ..., note: str = ...) -> object: ...


@dataclass(frozen=True)
class Write:
    """What one flow calls its write, in the words its job and attempts record."""

    noun: str  # "comment", "reply"
    not_found_yet: str  # the job's error kind while a listing does not show it yet
    listed_under: str  # where a listing looks: "the post's comments"


def last_unanswered(attempts: QuerySet, *, send: str, resolve: str):
    """The send that leaves the write in doubt (it may exist unrecorded): the last send
    without an answer since a lookup last proved it absent or a person settled it. A send
    refused later (a 429, a 5xx before anything was made) made nothing, and settles nothing
    about the one before it."""
    cleared = attempts.filter(Q(kind=resolve) | Q(outcome=ABSENT)).order_by("pk").last()
    sends = attempts.filter(kind=send, outcome__in=IN_DOUBT)
    if cleared is not None:
        sends = sends.filter(pk__gt=cleared.pk)
    return sends.order_by("pk").last()


def settled_at(unanswered: Attempt) -> datetime:
    """When an unanswered send can no longer land at the platform: RECONCILE_SETTLE_S after
    it started (a send's start is written on the database clock)."""
    return unanswered.started_at + timedelta(seconds=settings.RECONCILE_SETTLE_S)


# A platform's memory of a write (its idempotency key, its duplicate refusal) is counted on
# only within this share of its window, so that it does not run out on the way.
WINDOW_SHARE = 0.8


def still_remembered(since: datetime, window: timedelta | None) -> bool:
    """Whether the platform still remembers what was sent at `since` (no window: for good)."""
    return window is None or db_now() - since < window * WINDOW_SHARE


def key_answers(first_send: Attempt | None, *, honoured: bool, window: timedelta | None) -> bool:
    """Whether a resend under the write's key returns what an earlier send made: the
    platform honours the key for this account, and still remembers it since the first send."""
    if not honoured or first_send is None:
        return False
    return still_remembered(first_send.started_at, window)


def not_found(
    job: Job,
    lookup: Attempt,
    write: Write,
    *,
    settle_at: datetime,
    strong: bool,
    last_try: bool,
    resend_under_key: bool = False,
) -> bool:
    """A lookup found nothing: True when sending again is safe (absence is proven, or
    `resend_under_key`: the key answers for a write already made), False when a person
    must decide. Raises for the job to look again: a Snooze (no attempt spent) before
    `settle_at`, a retry while a listing has attempts left."""
    now = db_now()
    if now < settle_at:
        # The unanswered send may still be landing: neither absent nor a person's yet.
        lookup.close(FAILED, note="Not found yet; it may still land.")
        check_again(job, write, now=now, settle_at=settle_at)
    if strong:
        lookup.close(ABSENT, note="Not found by its exact key.")
        return True
    if resend_under_key:
        # Not proven absent (the send stays the one in doubt until the resend is recorded),
        # but the key makes the resend return the first write if there is one.
        lookup.close(FAILED, note=f"Not among {write.listed_under}; sent again under its key.")
        return True
    # Closed as failed (the lookup's own outcome): the send it followed stays the one in doubt.
    lookup.close(FAILED, note=f"Not among {write.listed_under} yet.")
    if not last_try:
        # A listing may lag behind a write just made: ask again before giving up.
        raise RetryableError(
            write.not_found_yet, f"The {write.noun} is not listed yet; asking again."
        )
    return False


def lookup_failed(job: Job, lookup: Attempt, err: ProviderError, *, last_try: bool) -> bool:
    """The lookup itself failed, so nothing was learnt: True when a person must decide
    (the last try: the write may exist, so it is never called failed), False when the
    caller lets the error through to be retried. A throttled lookup is asked again after
    the platform's reset as a Snooze, spending no attempt."""
    lookup.close(FAILED, error=err.as_dict())
    if err.kind == ErrorKind.RATE_LIMITED:
        now = db_now()
        wait_s = max(delay_seconds(err.retry_at, now=lambda: now), THROTTLED_MIN_WAIT_S)
        raise Snooze(now + timedelta(seconds=wait_s), f"The lookup was throttled: {err.message}")
    return last_try


def refused_in_progress(job: Job, send: Attempt, write: Write, err: ProviderError) -> None:
    """A send refused because an earlier request under the write's key is still running:
    that request may make it, so the write is in doubt like a send without an answer (the
    next run looks it up), its settle window counted from this send. Returns only for any
    other refusal."""
    if err.code != REQUEST_IN_PROGRESS:
        return
    send.close(UNKNOWN, error=err.as_dict())
    check_again(job, write, now=db_now(), settle_at=settled_at(send))


def check_again(job: Job, write: Write, *, now: datetime, settle_at: datetime) -> NoReturn:
    """Look again after the job's backoff, no later than `settle_at`, without spending an
    attempt: the lookup's tries count only once "not found" can mean something."""
    delay_s = get_job_type(job.type).backoff.delay(max(job.attempts, 1))
    check_at = min(now + timedelta(seconds=delay_s), settle_at)
    raise Snooze(check_at, f"The {write.noun} is not found yet; it may still land.")

"""How a delivery run fails: the rendition's failure written under the lease, then the run
stopped with the job outcome that matches (retry with backoff, snooze on a rate limit, or
permanent); ambiguous failures handed to reconciliation or a person; attempts a stopped
worker left in flight; and our own bugs mid-run."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import NoReturn

from django.conf import settings
from django.db.models import Q

from apps.accounts import services as account_services
from apps.accounts.models import SocialAccount
from apps.common import events
from apps.jobs.errors import PermanentError, RetryableError, Snooze
from apps.jobs.models import Job
from apps.jobs.registry import get_job_type
from apps.jobs.services import holding_lease, job_enqueue
from apps.providers.base import Adapter, SupportsLookup, get_adapter
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.publishing.delivery.enqueue import (
    PUBLISH_JOB,
    RECONCILE_JOB,
    reconcile_dedupe_key,
    schedule_publish,
)
from apps.publishing.delivery.run import Stop, db_now, seconds_until
from apps.publishing.delivery.unanswered import still_remembered
from apps.publishing.locks import lock_rendition
from apps.publishing.services.status import publication_refresh_status
from apps.renditions.models import DeliveryAttempt, Rendition

logger = logging.getLogger(__name__)


def fail(
    job: Job,
    rendition: Rendition,
    err: ProviderError,
    *,
    details: dict | None = None,
    hand_over: bool = False,
    closing: Callable[[], object] | None = None,
) -> NoReturn:
    """Write the failure's consequences under the lease, then stop the run with the job
    outcome that matches. `hand_over`: the platform holds accepted work whose fate we cannot
    tell, so the failure is ambiguous whatever its kind (never retried, never resent).
    A failure while an earlier request of the rendition may have made the post
    (``unsettled_request``) is ambiguous too: a refusal of a later attempt settles nothing
    about that request (``_refused_while_unsettled``), unless the platform's answer proves
    the segment has no post (``err.nothing_posted``). `closing` (closing the attempt that
    failed) is written in the same transaction: a worker killed before that commit leaves
    the attempt in flight, which recovery settles as ambiguous, never as nothing sent.
    Never returns."""
    error = err.as_dict()
    if details:
        error["details"] = details
    ambiguous = hand_over or err.kind == ErrorKind.OUTCOME_UNKNOWN
    outcome: Exception | None = None
    handed_to_publish = False
    with holding_lease(job):
        if closing is not None:
            closing()
        current = lock_rendition(rendition.pk)
        if current.status == Rendition.Status.WAITING:
            current.transition_to(Rendition.Status.PUBLISHING)
        # Otherwise a person or another job settled it meanwhile.
        if current.status == Rendition.Status.PUBLISHING:
            # A platform answer proving the segment made no post (`nothing_posted`) settles
            # its earlier requests too: no doubt is left to hand over.
            unsettled = None if ambiguous or err.nothing_posted else unsettled_request(current)
            if unsettled is not None:
                ambiguous = True
                outcome = _refused_while_unsettled(job, current, err, error, unsettled)
            else:
                outcome = _write_failure(job, current, err, error, ambiguous=ambiguous)
                handed_to_publish = _hand_retry_to_publish(job, current)
    if outcome is None:
        raise Stop()
    logger.info(
        "rendition failed: %s",
        err.kind,
        extra={
            "rendition_id": rendition.pk,
            "job_id": job.pk,
            "kind": str(err.kind),
            "ambiguous": ambiguous,
            "retry_at": current.next_retry_at,
        },
    )
    raise Stop(None if handed_to_publish else outcome)


def _hand_retry_to_publish(job: Job, current: Rendition) -> bool:
    """A retry pending is the publish job's. A failure written by another job (a status
    poll delivering the thread's next segments once the first was published) schedules the
    publish job at the rendition's retry time, in the same transaction, and that job ends
    done: its own rerun would find the rendition failed and do nothing, leaving the retry
    to the due sweep's next pass. True when handed over (under the caller's locks)."""
    if job.type == PUBLISH_JOB or not current.is_retry_pending:
        return False
    schedule_publish(current, run_at=current.next_retry_at)
    return True


def _write_failure(
    job: Job, current: Rendition, err: ProviderError, error: dict, *, ambiguous: bool
) -> Exception:
    """The failed rendition's new state (under the caller's locks); returns the job outcome
    that matches."""
    job_type = get_job_type(job.type)
    outcome: Exception
    if ambiguous:
        fail_ambiguous(current, error)
        if err.kind == ErrorKind.AUTH_EXPIRED:
            account_services.social_account_mark_needs_reconnect(account=current.social_account)
        outcome = PermanentError(err.kind, err.message, details=error)
    elif err.kind == ErrorKind.AUTH_EXPIRED:
        # account.needs_reconnect once, when the account changes.
        newly_expired = current.social_account.status == SocialAccount.Status.CONNECTED
        account_services.social_account_mark_needs_reconnect(account=current.social_account)
        if newly_expired:
            events.emit(events.ACCOUNT_NEEDS_RECONNECT, account=current.social_account)
        current.mark_failed(error)
        outcome = PermanentError(err.kind, err.message, details=error)
    elif err.retryable and job.attempts < job.max_attempts:
        now = db_now()
        floor_s = seconds_until(err.retry_at, now=now)
        if err.kind == ErrorKind.RATE_LIMITED and err.retry_at is not None:
            delay_s = floor_s  # the platform said when; waiting is not an attempt
            outcome = Snooze(timedelta(seconds=delay_s), err.message)
        else:
            delay_s = job_type.backoff.delay(job.attempts, floor_s=floor_s)
            outcome = RetryableError(
                err.kind,
                err.message,
                retry_at=timedelta(seconds=delay_s),
                details=error,
                exact=True,  # the rendition shows this very time as its next retry
            )
        current.mark_failed(error, retry_at=now + timedelta(seconds=delay_s))
    else:
        current.mark_failed(error)
        outcome = PermanentError(err.kind, err.message, details=error)
    events.emit(events.RENDITION_FAILED, rendition=current)
    publication_refresh_status(current.publication)
    return outcome


def unsettled_request(rendition: Rendition) -> DeliveryAttempt | None:
    """The latest attempt whose request may have reached the platform (outcome unknown, or
    lost with its worker) for a segment that still has no post, unless something settled
    it since: a person's resolution, or a lookup that proved the post absent on a platform
    whose lookup is exact. None when there is no such request."""
    outcome = DeliveryAttempt.Outcome
    open_positions = rendition.segments.filter(provider_post_id="").values("position")
    latest = (
        post_making_attempts(rendition)
        .filter(segment_position__in=open_positions, outcome__in=[outcome.UNKNOWN, outcome.LOST])
        .order_by("-pk")
        .first()
    )
    if latest is None:
        return None
    settling = Q(outcome=outcome.RESOLVED)
    if _lookup_is_strong(rendition.platform):
        settling |= Q(outcome=outcome.ABSENT, segment_position=latest.segment_position)
    if rendition.delivery_attempts.filter(pk__gt=latest.pk).filter(settling).exists():
        return None
    return latest


def post_making_attempts(rendition: Rendition):
    """The rendition's attempts whose request could have made a post: not its first
    comment's, nor the publish step of a platform where that step makes no post (a Meta
    container, published only by the poll)."""
    attempts = rendition.delivery_attempts.exclude(kind=DeliveryAttempt.Kind.COMMENT)
    try:
        publish_makes_post = get_adapter(rendition.platform).publish_makes_post
    except LookupError:
        publish_makes_post = True
    if not publish_makes_post:
        attempts = attempts.exclude(kind=DeliveryAttempt.Kind.PUBLISH)
    return attempts


def _lookup_is_strong(platform: str) -> bool:
    try:
        return get_adapter(platform).lookup_is_strong
    except LookupError:
        return False


def _refused_while_unsettled(
    job: Job, current: Rendition, err: ProviderError, refusal: dict, unsettled: DeliveryAttempt
) -> Exception:
    """A later attempt was refused (a rate limit, a 5xx, a rejection) or stopped before it
    left, while an earlier request of the same segment may have made the post. The refusal
    says nothing about that request: the rendition stays ambiguous, its check scheduled no
    earlier than the refusal allows (the platform's reset time, else the publish backoff),
    and nothing is sent again before the check. Spent attempts alone never hand it to a
    person while the platform's handle can still settle that request (`_handle_settles`):
    the check does. A person verifies only when a resend cannot help (a refusal that is
    not retried) or nothing but a resend could settle it and the attempts are spent.
    Runs under the caller's locks; returns the job outcome."""
    may_resend = (err.retryable or err.kind == ErrorKind.AUTH_EXPIRED) and (
        _attempts_left(job, current) or _handle_settles(current, unsettled)
    )
    then = (
        "It is checked on the platform before anything is sent again."
        if may_resend
        else "Verify on the platform whether the post exists."
    )
    error = ProviderError(
        ErrorKind.OUTCOME_UNKNOWN,
        "An earlier request went unanswered and the post may exist; a later attempt was "
        f"refused ({err.kind}: {err.message}). {then}",
        code="refused_after_unknown",
        http_status=err.http_status,
        retryable=False,
    ).as_dict()
    error["refused"] = refusal
    if err.kind == ErrorKind.AUTH_EXPIRED:
        # The check waits for the reconnect (account.needs_reconnect once, when it changes).
        newly_expired = current.social_account.status == SocialAccount.Status.CONNECTED
        account_services.social_account_mark_needs_reconnect(account=current.social_account)
        if newly_expired:
            events.emit(events.ACCOUNT_NEEDS_RECONNECT, account=current.social_account)
    if may_resend:
        now = db_now()
        floor_s = seconds_until(err.retry_at, now=now)
        if err.kind == ErrorKind.RATE_LIMITED and err.retry_at is not None:
            delay_s = floor_s  # the platform said when
        else:
            job_type = get_job_type(job.type)
            delay_s = job_type.backoff.delay(max(current.attempts, 1), floor_s=floor_s)
        fail_ambiguous(current, error, not_before=now + timedelta(seconds=delay_s))
    else:
        current.mark_failed(error, ambiguous=True)
    events.emit(events.RENDITION_FAILED, rendition=current)
    publication_refresh_status(current.publication)
    return PermanentError(error["kind"], error["message"], details=error)


def _attempts_left(job: Job, current: Rendition) -> bool:
    """Whether the rendition has publish attempts left. A run the platform turned away
    with a reset time (429 with Retry-After) spent none: the platform said when to come
    back, nothing was tried, and the jobs layer's Snooze counts such a wait as no attempt
    either (DESIGN: Retry-After sets the floor of the next try, it is not a failure)."""
    refusals = current.delivery_attempts.filter(
        kind=DeliveryAttempt.Kind.PUBLISH, error__kind=str(ErrorKind.RATE_LIMITED)
    ).values_list("error", flat=True)
    deferred = len([refusal for refusal in refusals if refusal and refusal.get("retry_at")])
    return current.attempts - deferred < job.max_attempts


def _handle_settles(current: Rendition, unsettled: DeliveryAttempt) -> bool:
    """Whether reconciliation can still settle the unanswered request of `unsettled`'s
    segment through the platform's handle, however many attempts were spent: an exact
    lookup, or a resend under the idempotency key while the platform still remembers it
    (counted from the segment's first unanswered send)."""
    try:
        adapter = get_adapter(current.platform)
    except LookupError:
        return False
    if isinstance(adapter, SupportsLookup) and adapter.lookup_is_strong:
        return True
    if not adapter.is_retry_safe(current.social_account):
        return False
    first = (
        current.delivery_attempts.filter(
            segment_position=unsettled.segment_position,
            outcome__in=[DeliveryAttempt.Outcome.UNKNOWN, DeliveryAttempt.Outcome.LOST],
        )
        .order_by("started_at")
        .first()
    )
    return within_key_window(adapter, first)


def within_key_window(adapter: Adapter, sent: DeliveryAttempt | None) -> bool:
    """Whether a resend under the key of the unanswered `sent` still reaches the platform
    while it remembers the key (a margin left before the platform's window ends)."""
    if adapter.idempotency_window is None:
        return True
    if sent is None:
        return False
    return still_remembered(sent.started_at, adapter.idempotency_window)


def fail_ambiguous(
    rendition: Rendition, error: dict, *, not_before: datetime | None = None
) -> None:
    """Mark the rendition an ambiguous failure and hand it to reconciliation when its
    platform gives a handle (the check no earlier than `not_before`); while that check is
    scheduled the action is `wait` (with `check_at`), and `verify` (a person) only when no
    check will come."""
    check_at = enqueue_reconcile(rendition, not_before=not_before)
    if check_at is not None:
        error = {**error, "action": str(Action.WAIT), "check_at": check_at.isoformat()}
    rendition.mark_failed(error, ambiguous=True)


def enqueue_reconcile(
    rendition: Rendition, *, not_before: datetime | None = None
) -> datetime | None:
    """Schedule reconciliation when the platform gives a handle (a lookup, or an
    idempotency key it honours), no earlier than `not_before`; returns when it runs, or
    None (a person resolves it)."""
    adapter = get_adapter(rendition.platform)
    if not (
        isinstance(adapter, SupportsLookup)
        or adapter.is_retry_safe(rendition.social_account)
        or adapter.duplicate_refusal_names_post
    ):
        return None
    run_at = db_now() + timedelta(seconds=settings.RECONCILE_DELAY_S)
    if not_before is not None:
        run_at = max(run_at, not_before)
    job_enqueue(
        type=RECONCILE_JOB,
        payload={"rendition_id": rendition.pk},
        organization=None,
        workspace=rendition.workspace,
        run_at=run_at,
        dedupe_key=reconcile_dedupe_key(rendition.pk),
        lane=rendition.platform,
    )
    return run_at


def settle_lost_attempts(rendition: Rendition, *, worker: str) -> bool:
    """Close attempts left in flight by a run that stopped. If there were any, the
    publishing rendition becomes an ambiguous failure handed to reconciliation; returns
    whether it did. Runs under the caller's locks."""
    lost = list(rendition.delivery_attempts.in_flight())
    for attempt in lost:
        attempt.close(
            DeliveryAttempt.Outcome.LOST,
            note=f"{worker or 'The worker'} stopped during the call.",
        )
    if not lost:
        return False
    fail_ambiguous(
        rendition,
        ProviderError(
            ErrorKind.OUTCOME_UNKNOWN,
            "The worker stopped while the request may have been sent; the post may exist.",
            code="worker_lost",
        ).as_dict(),
    )
    events.emit(events.RENDITION_FAILED, rendition=rendition)
    return True


def fail_unexpected(job: Job, rendition_id: int, exc: Exception) -> None:
    """Our bug mid-run: never leave the rendition silently stuck in publishing."""
    with holding_lease(job):
        rendition = lock_rendition(rendition_id)
        if rendition.status not in (Rendition.Status.PUBLISHING, Rendition.Status.WAITING):
            return
        if rendition.status == Rendition.Status.WAITING:
            rendition.transition_to(Rendition.Status.PUBLISHING)
        if not settle_lost_attempts(rendition, worker=job.locked_by):
            if unsettled_request(rendition) is not None:
                # An earlier request may have made the post: a person verifies, and no
                # retry (theirs or ours) may send it blindly.
                rendition.mark_failed(
                    ProviderError(
                        ErrorKind.OUTCOME_UNKNOWN,
                        f"Publishing stopped on an internal error ({type(exc).__name__}) "
                        "after an earlier request went unanswered; the post may exist.",
                        code="internal_error",
                        retryable=False,
                    ).as_dict(),
                    ambiguous=True,
                )
            else:
                rendition.mark_failed(
                    ProviderError(
                        ErrorKind.UNKNOWN,
                        f"Publishing stopped on an internal error ({type(exc).__name__}).",
                        code="internal_error",
                        action=Action.CONTACT_SUPPORT,
                        retryable=False,
                    ).as_dict()
                )
            events.emit(events.RENDITION_FAILED, rendition=rendition)
        publication_refresh_status(rendition.publication)


def hand_over_unexpected(job: Job, rendition_id: int, exc: Exception) -> None:
    """Our bug while polling accepted work: a person decides; it is never sent again."""
    with holding_lease(job):
        rendition = lock_rendition(rendition_id)
        if rendition.status != Rendition.Status.WAITING:
            return
        rendition.transition_to(Rendition.Status.PUBLISHING)
        fail_ambiguous(
            rendition,
            ProviderError(
                ErrorKind.UNKNOWN,
                f"Checking on the platform stopped on an internal error ({type(exc).__name__});"
                " the post may exist.",
                code="internal_error",
                action=Action.VERIFY,
                retryable=False,
            ).as_dict(),
        )
        events.emit(events.RENDITION_FAILED, rendition=rendition)
        publication_refresh_status(rendition.publication)

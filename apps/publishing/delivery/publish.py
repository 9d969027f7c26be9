"""The publish pipeline: one publish job per rendition (DESIGN §7).

A run loads the account (refreshing its token when near expiry), validates the rendition
against the capability catalog, then publishes its segments in order through the platform's
adapter. Each segment's provider id is stored the moment it exists, so a retry never sends a
segment (or a rendition) that already succeeded. Outcomes are written only while the job's
lease holds, so a worker that lost its lease cannot overwrite the worker that took over.

Failures follow the provider's classification:
- retryable kinds are retried with backoff (a Retry-After is the floor; a rate limit snoozes
  the job without spending an attempt), the next attempt time stored on the rendition and on
  the job;
- an unknown outcome (sent, no answer) is never resent blindly: the rendition fails with
  ``ambiguous`` and a reconciliation job looks for the post (apps.renditions.reconcile);
- an expired token fails the rendition with the action ``reconnect`` and marks the account;
- everything else fails the rendition for a person to act on.

Accepted work is never created anew. Once a platform has accepted a segment that it is
still processing (a container, an upload session, a publish id), the rendition keeps it
in ``checkpoint["pending"]`` and the waiting state owns it: a rate limit or an outage on a
status poll polls again later, and no path (retry, sweep, stale recovery) sends the segment
again. It ends published, failed because the platform said the processing failed, or
handed to a person (an ambiguous failure) when we cannot tell.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.accounts import services as account_services
from apps.accounts.crypto import CredentialsError
from apps.accounts.models import SocialAccount
from apps.common import events
from apps.common.media_urls import signed_media_url
from apps.jobs.errors import JobOutcome, PermanentError, RetryableError, Snooze, Waiting
from apps.jobs.models import Job
from apps.jobs.registry import get_job_type
from apps.jobs.services import holding_lease, job_enqueue
from apps.providers.base import (
    Adapter,
    MediaPayload,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    SupportsLookup,
    SupportsStatusPoll,
    get_adapter,
)
from apps.providers.errors import RETRYABLE_KINDS, Action, ErrorKind, ProviderError
from apps.publications.models import Publication
from apps.publications.services.status import publication_refresh_status
from apps.renditions.delivery import (
    POLL_JOB,
    RECONCILE_JOB,
    poll_dedupe_key,
    reconcile_dedupe_key,
    schedule_publish,
)
from apps.renditions.models import DeliveryAttempt, Rendition, RenditionSegment
from apps.renditions.selectors import rendition_problems

logger = logging.getLogger(__name__)

# How often an asynchronous platform is asked about a pending segment.
POLL_INTERVAL = timedelta(seconds=30)


class _Stop(Exception):  # noqa: N818 - control flow inside a run
    """Ends a run after its outcome was written; carries what the job should become."""

    def __init__(self, outcome: Exception | None = None) -> None:
        super().__init__("stop")
        self.outcome = outcome


# --- loading -----------------------------------------------------------------------------


def lock_rendition(rendition_id: int) -> Rendition:
    """Lock the publication, then the rendition (the services' lock order)."""
    publication_id = Rendition.objects.values_list("publication_id", flat=True).get(pk=rendition_id)
    Publication.objects.select_for_update().filter(pk=publication_id).first()
    return (
        Rendition.objects.select_for_update(of=("self",))
        .select_related("publication", "social_account", "workspace__organization")
        .get(pk=rendition_id)
    )


def db_now() -> datetime:
    """The database clock: what decides when work is due (never the worker host's)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        return cursor.fetchone()[0]


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
                open=lambda asset=asset: asset.file.storage.open(asset.file.name, "rb"),
                width=asset.width,
                height=asset.height,
                public_url=_public_url(asset),
            )
        )
    return payloads


def _public_url(asset) -> str:
    """A signed, expiring URL for platforms that fetch media themselves."""
    return signed_media_url(asset.file, settings.MEDIA_URL_EXPIRE_S)


def _fingerprint(segment: SegmentPayload, reply_to: ReplyTarget | None) -> str:
    body = {
        "text": segment.text,
        "media": [[m.media_id, m.alt_text] for m in segment.media],
        "reply_to": reply_to.parent.provider_post_id if reply_to else None,
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


@dataclass
class _Run:
    """One job's work on one rendition."""

    job: Job
    rendition: Rendition
    adapter: Adapter
    ctx: PublishContext

    @property
    def account(self) -> SocialAccount:
        return self.rendition.social_account


def publish_context(rendition: Rendition, credentials: dict) -> PublishContext:
    return PublishContext(
        account=rendition.social_account,
        credentials=credentials,
        settings=rendition.settings or {},
        rendition_id=rendition.pk,
        idempotency_base=f"rendition-{rendition.pk}",
        checkpoint=dict(rendition.checkpoint or {}),
        checkpoint_saver=lambda checkpoint: _write_checkpoint(rendition, checkpoint),
        credentials_saver=lambda fresh: store_refreshed_credentials(
            rendition.social_account, fresh
        ),
        attempted_before=lambda position: _attempted_before(rendition, position),
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


def store_refreshed_credentials(account: SocialAccount, fresh: dict) -> None:
    """Persist credentials refreshed by an adapter mid-call, and their expiry, under a row
    lock on the account (the one place credentials are written during delivery)."""
    expires_at = fresh.get("expires_at")
    with transaction.atomic():
        locked = SocialAccount.objects.select_for_update().get(pk=account.pk)
        if expires_at:
            locked.token_expires_at = datetime.fromisoformat(expires_at)
            locked.save(update_fields=["token_expires_at", "updated_at"])
        account_services.social_account_store_credentials(account=locked, credentials=fresh)
    account.token_expires_at = locked.token_expires_at


def _write_checkpoint(rendition: Rendition, checkpoint: dict) -> None:
    """Keep the server-issued handles an adapter recorded (upload sessions, containers):
    written at once and whatever the lease, since they describe the platform."""
    Rendition.objects.filter(pk=rendition.pk).update(checkpoint=checkpoint)
    rendition.checkpoint = dict(checkpoint)


def _save_checkpoint(run: _Run) -> None:
    """Persist what the adapter recorded in the checkpoint, if it did not itself."""
    if run.ctx.checkpoint != (run.rendition.checkpoint or {}):
        _write_checkpoint(run.rendition, dict(run.ctx.checkpoint))


# --- the publish job -----------------------------------------------------------------------


def publish(job: Job) -> None:
    """Handler of ``renditions.publish``: deliver one rendition."""
    rendition_id = job.payload["rendition_id"]
    with holding_lease(job):
        rendition = lock_rendition(rendition_id)
        if not _start(job, rendition):
            return
    try:
        run = _prepare(job, rendition)
        _deliver(run)
    except _Stop as stop:
        if stop.outcome is not None:
            raise stop.outcome from None
    except Exception as exc:
        _fail_unexpected(job, rendition_id, exc)
        raise


def _fail_unexpected(job: Job, rendition_id: int, exc: Exception) -> None:
    """Our bug mid-run: never leave the rendition silently stuck in publishing."""
    with holding_lease(job):
        rendition = lock_rendition(rendition_id)
        if rendition.status not in (Rendition.Status.PUBLISHING, Rendition.Status.WAITING):
            return
        if rendition.status == Rendition.Status.WAITING:
            rendition.transition_to(Rendition.Status.PUBLISHING)
        if not _settle_lost_attempts(rendition, worker=job.locked_by):
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


def _start(job: Job, rendition: Rendition) -> bool:
    """Move the rendition to publishing if this run should deliver it; False when there is
    nothing to do (published, cancelled, waiting on a poll, ambiguous, or a person acted).
    Raises Snooze when the job woke before the rendition is due."""
    status = rendition.status
    if accepted_work(rendition) and status in (
        Rendition.Status.PUBLISHING,
        Rendition.Status.SCHEDULED,
        Rendition.Status.FAILED,
    ):
        if status != Rendition.Status.FAILED or rendition.is_retry_pending:
            resume_waiting(rendition)
        return False
    if status == Rendition.Status.PUBLISHING:
        # Another run was here (its job released at shutdown or recovered): if it had a
        # request in flight, the post may exist, so it is never sent again blindly.
        return not _settle_lost_attempts(rendition, worker=job.locked_by)
    if status == Rendition.Status.FAILED and not rendition.is_retry_pending:
        return False
    if status not in (Rendition.Status.SCHEDULED, Rendition.Status.FAILED):
        return False
    due = (
        rendition.next_retry_at
        if status == Rendition.Status.FAILED
        else rendition.effective_scheduled_at
    )
    if due is not None and due > db_now() + timedelta(milliseconds=500):
        # A duplicate or early wake-up never runs a rendition before its time.
        raise Snooze(due, "not due yet")
    if status == Rendition.Status.FAILED:
        rendition.mark_scheduled()
    rendition.mark_publishing()
    publication_refresh_status(rendition.publication)
    return True


def _prepare(job: Job, rendition: Rendition, *, accepted: bool = False) -> _Run:
    """Account, adapter, credentials (refreshed when near expiry) and validation.
    `accepted`: the platform already holds the work (a status poll), so a failure here
    hands it to a person instead of failing it, and there is nothing left to validate."""
    account = rendition.social_account
    if account.status != SocialAccount.Status.CONNECTED:
        _fail(
            job,
            rendition,
            ProviderError(
                ErrorKind.AUTH_EXPIRED,
                f"The {account.platform} account @{account.handle} must be reconnected.",
                code=f"account_{account.status}",
            ),
            hand_over=accepted,
        )
    try:
        adapter = get_adapter(rendition.platform)
    except LookupError:
        _fail(
            job,
            rendition,
            ProviderError(
                ErrorKind.PLAN_RESTRICTED,
                f"Publishing to {rendition.platform} is not available on this installation.",
                code="no_adapter",
            ),
        )
    try:
        credentials = account_services.social_account_credentials(account)
    except CredentialsError as exc:
        _fail(
            job,
            rendition,
            ProviderError(
                ErrorKind.UNKNOWN,
                str(exc),
                code="credentials_unreadable",
                action=Action.CONTACT_SUPPORT,
                retryable=False,
            ),
        )
    run = _Run(
        job=job, rendition=rendition, adapter=adapter, ctx=publish_context(rendition, credentials)
    )
    _refresh_credentials(run, hand_over=accepted)
    problems = [] if accepted else rendition_problems(rendition)
    if problems:
        first = problems[0]
        _fail(
            job,
            rendition,
            ProviderError(
                ErrorKind.CONTENT_REJECTED,
                f"{first.path}: {first.message}",
                code=first.code,
                retryable=False,
            ),
            details={"problems": [p.as_dict() for p in problems]},
        )
    return run


def _refresh_credentials(run: _Run, *, hand_over: bool = False) -> None:
    """Refresh the token when near expiry, under a row lock on the account so two workers
    never spend one refresh token twice."""
    try:
        with transaction.atomic():
            account = SocialAccount.objects.select_for_update().get(pk=run.account.pk)
            credentials = account_services.social_account_credentials(account)
            fresh = run.adapter.refresh_credentials(account, credentials)
            if fresh is None:
                if credentials != run.ctx.credentials:
                    run.ctx.credentials.clear()
                    run.ctx.credentials.update(credentials)
                return
            expires_at = fresh.get("expires_at")
            account.token_expires_at = (
                datetime.fromisoformat(expires_at) if expires_at else account.token_expires_at
            )
            account.save(update_fields=["token_expires_at", "updated_at"])
            account_services.social_account_store_credentials(account=account, credentials=fresh)
            run.ctx.credentials.clear()
            run.ctx.credentials.update(fresh)
    except ProviderError as err:
        if err.kind in RETRYABLE_KINDS and hand_over:
            return  # the poll goes on with the current token; the refresh is tried again
        _fail(run.job, run.rendition, err, hand_over=hand_over)


def _deliver(run: _Run) -> None:
    """Publish every segment that has no provider id yet, in thread order."""
    root: PublishedSegment | None = None
    parent: PublishedSegment | None = None
    segments = list(run.rendition.segments.order_by("position"))
    for segment in segments:
        if segment.is_published:
            done = PublishedSegment(segment.provider_post_id, segment.provider_url)
            root, parent = root or done, done
            continue
        payload = SegmentPayload(segment.position, segment.text, media_payloads(segment))
        reply_to = ReplyTarget(root=root, parent=parent) if parent else None
        result = _send(run, segment, payload, reply_to)
        if result.pending:
            _park(run, segment, result)
            return
        root, parent = root or result, result
    _finish(run, segments)


def _send(
    run: _Run, segment: RenditionSegment, payload: SegmentPayload, reply_to: ReplyTarget | None
) -> PublishedSegment:
    """One segment, with its attempt row committed before the request leaves."""
    attempt = DeliveryAttempt.objects.create(
        rendition=run.rendition,
        workspace_id=run.rendition.workspace_id,
        kind=DeliveryAttempt.Kind.PUBLISH,
        segment_position=segment.position,
        job_id=run.job.pk,
        worker=run.job.locked_by,
        idempotency_key=run.ctx.idempotency_key(segment.position),
        request_fingerprint=_fingerprint(payload, reply_to),
    )
    try:
        result = run.adapter.publish_segment(run.ctx, payload, reply_to=reply_to)
    except ProviderError as err:
        _save_checkpoint(run)
        if (
            err.kind == ErrorKind.DUPLICATE_CONTENT
            and err.existing_post_id
            and (_had_unknown_outcome(run.rendition, segment.position))
        ):
            # The platform names the post an earlier, unanswered attempt created.
            result = PublishedSegment(err.existing_post_id)
            attempt.close(DeliveryAttempt.Outcome.FOUND, provider_post_id=result.provider_post_id)
            record_segment(segment, result)
            return result
        unknown = err.kind == ErrorKind.OUTCOME_UNKNOWN
        attempt.close(
            DeliveryAttempt.Outcome.UNKNOWN if unknown else DeliveryAttempt.Outcome.FAILED,
            error=err.as_dict(),
        )
        _fail(run.job, run.rendition, err)
    except Exception as exc:
        # Our bug, or an adapter that let a raw error escape: the request may have left.
        _save_checkpoint(run)
        attempt.close(
            DeliveryAttempt.Outcome.UNKNOWN,
            error={"kind": "unknown", "message": f"{type(exc).__name__}: {exc}"},
        )
        _fail(
            run.job,
            run.rendition,
            ProviderError(
                ErrorKind.OUTCOME_UNKNOWN,
                f"Publishing stopped on an internal error ({type(exc).__name__}); "
                "the post may exist.",
                code="internal_error",
            ),
        )
    if result.pending:
        # From here on the platform holds this segment: written before anything else, so
        # every later path finds it and waits for it instead of sending it again.
        run.ctx.checkpoint["pending"] = {
            "position": segment.position,
            "pending_id": result.provider_post_id,
            "accepted_at": timezone.now().isoformat(),
        }
    _save_checkpoint(run)
    if result.pending:
        attempt.close(DeliveryAttempt.Outcome.PENDING, provider_post_id=result.provider_post_id)
    else:
        attempt.close(
            DeliveryAttempt.Outcome.PUBLISHED,
            provider_post_id=result.provider_post_id,
            provider_url=result.provider_url,
        )
        record_segment(segment, result)
    return result


def record_segment(segment: RenditionSegment, result: PublishedSegment) -> None:
    """Store the segment's provider id: the truth about the platform, kept even if the
    lease was lost meanwhile (the guarded write never overwrites an earlier id)."""
    from apps.renditions.errors import SegmentAlreadyPublished

    try:
        segment.mark_published(result.provider_post_id, result.provider_url, result.published_at)
    except SegmentAlreadyPublished:
        segment.refresh_from_db()


def _had_unknown_outcome(rendition: Rendition, position: int) -> bool:
    return rendition.delivery_attempts.filter(
        segment_position=position,
        outcome__in=[DeliveryAttempt.Outcome.UNKNOWN, DeliveryAttempt.Outcome.LOST],
    ).exists()


def _next_poll_delay(adapter: Adapter, *, polls_done: int, accepted_at: datetime) -> float | None:
    """Seconds until the next poll, by the platform's schedule; None once its time budget
    is spent."""
    schedule = getattr(adapter, "poll_schedule", None)
    if schedule is None:
        return POLL_INTERVAL.total_seconds()
    elapsed = (timezone.now() - accepted_at).total_seconds()
    return schedule.next_delay(polls_done=polls_done, elapsed_s=elapsed)


def _park(run: _Run, segment: RenditionSegment, pending: PublishedSegment) -> None:
    """An asynchronous platform is processing the segment: wait for it in a poll job,
    which holds no seat of the organization's in-flight cap."""
    accepted = run.ctx.checkpoint["pending"]
    accepted_at = datetime.fromisoformat(accepted["accepted_at"])
    delay = _next_poll_delay(run.adapter, polls_done=0, accepted_at=accepted_at) or 0.0
    state = {**accepted, "polls": 0}
    with holding_lease(run.job):
        rendition = lock_rendition(run.rendition.pk)
        rendition.mark_waiting()
        if run.job.type != POLL_JOB:
            _enqueue_poll(rendition, state, delay)
        publication_refresh_status(rendition.publication)
    if run.job.type == POLL_JOB:
        # The poll job itself carries on with the thread's next pending segment.
        raise _Stop(Waiting(delay, "next segment processing", state=state))


def accepted_work(rendition: Rendition) -> dict | None:
    """The segment a platform accepted and is still processing, if any (see the module
    docstring): {"position", "pending_id", "accepted_at"}."""
    return (rendition.checkpoint or {}).get("pending")


def _enqueue_poll(rendition: Rendition, state: dict, delay_s: float) -> None:
    job_enqueue(
        type=POLL_JOB,
        payload={"rendition_id": rendition.pk, **state},
        organization=None,
        workspace=rendition.workspace,
        run_at=timezone.now() + timedelta(seconds=delay_s),
        dedupe_key=poll_dedupe_key(rendition.pk),
    )


def resume_waiting(rendition: Rendition) -> None:
    """Put a rendition whose segment the platform accepted back under its poll job,
    whatever path found it (a publish job, stale recovery). Runs under the caller's locks."""
    accepted = accepted_work(rendition)
    if rendition.status == Rendition.Status.FAILED:
        rendition.mark_scheduled()
    if rendition.status == Rendition.Status.SCHEDULED:
        rendition.transition_to(Rendition.Status.PUBLISHING, next_retry_at=None)
    for attempt in rendition.delivery_attempts.in_flight():
        attempt.close(DeliveryAttempt.Outcome.LOST, note="The run stopped; waiting resumes.")
    rendition.mark_waiting()
    _enqueue_poll(rendition, {**accepted, "polls": 0}, POLL_INTERVAL.total_seconds())
    logger.info("accepted work resumes waiting", extra={"rendition_id": rendition.pk})


def _finish(run: _Run, segments: list[RenditionSegment]) -> None:
    first = min(segments, key=lambda s: s.position)
    first.refresh_from_db()
    with holding_lease(run.job):
        rendition = lock_rendition(run.rendition.pk)
        if rendition.status == Rendition.Status.WAITING:
            rendition.transition_to(Rendition.Status.PUBLISHING)
        rendition.mark_published(first.provider_post_id, first.provider_url, first.published_at)
        events.emit(events.RENDITION_PUBLISHED, rendition=rendition)
        publication_refresh_status(rendition.publication)
    logger.info(
        "rendition published",
        extra={"rendition_id": rendition.pk, "job_id": run.job.pk, "platform": rendition.platform},
    )


# --- failures ------------------------------------------------------------------------------


def _fail(
    job: Job,
    rendition: Rendition,
    err: ProviderError,
    *,
    details: dict | None = None,
    hand_over: bool = False,
):
    """Write the failure's consequences under the lease, then stop the run with the job
    outcome that matches. `hand_over`: the platform holds accepted work whose fate we cannot
    tell, so the failure is ambiguous whatever its kind (never retried, never resent).
    Never returns."""
    error = err.as_dict()
    if details:
        error["details"] = details
    job_type = get_job_type(job.type)
    outcome: Exception
    ambiguous = hand_over or err.kind == ErrorKind.OUTCOME_UNKNOWN
    with holding_lease(job):
        current = lock_rendition(rendition.pk)
        if current.status == Rendition.Status.WAITING:
            current.transition_to(Rendition.Status.PUBLISHING)
        if current.status != Rendition.Status.PUBLISHING:
            raise _Stop()  # a person or another job settled it meanwhile
        if ambiguous:
            _fail_ambiguous(current, error)
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
            floor_s = max((err.retry_at - now).total_seconds(), 0.0) if err.retry_at else 0.0
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
    raise _Stop(outcome)


def _fail_ambiguous(rendition: Rendition, error: dict) -> None:
    """Mark the rendition an ambiguous failure and hand it to reconciliation when its
    platform gives a handle; while that check is scheduled the action is `wait` (with
    `check_at`), and `verify` (a person) only when no check will come."""
    check_at = _enqueue_reconcile(rendition)
    if check_at is not None:
        error = {**error, "action": str(Action.WAIT), "check_at": check_at.isoformat()}
    rendition.mark_failed(error, ambiguous=True)


def _enqueue_reconcile(rendition: Rendition) -> datetime | None:
    """Schedule reconciliation when the platform gives a handle (a lookup, or an
    idempotency key it honours); returns when it runs, or None (a person resolves it)."""
    adapter = get_adapter(rendition.platform)
    if not (isinstance(adapter, SupportsLookup) or adapter.is_retry_safe(rendition.social_account)):
        return None
    run_at = timezone.now() + timedelta(seconds=settings.RECONCILE_DELAY_S)
    job_enqueue(
        type=RECONCILE_JOB,
        payload={"rendition_id": rendition.pk},
        organization=None,
        workspace=rendition.workspace,
        run_at=run_at,
        dedupe_key=reconcile_dedupe_key(rendition.pk),
    )
    return run_at


def on_publish_stale(job: Job) -> None:
    """Stale recovery of a publish job (its worker stopped heart-beating mid-run).

    If an attempt was in flight, the request may have reached the platform: the rendition
    becomes an ambiguous failure and goes to reconciliation, never blindly resent. If none
    was, nothing left: the rendition is released back to scheduled and runs again.
    """
    rendition = lock_rendition(job.payload["rendition_id"])
    if rendition.status == Rendition.Status.PUBLISHING:
        _recover_publishing(rendition, worker=job.locked_by)
    elif rendition.status == Rendition.Status.SCHEDULED or rendition.is_retry_pending:
        schedule_publish(rendition, run_at=rendition.next_retry_at or timezone.now())
    publication_refresh_status(rendition.publication)


def _recover_publishing(rendition: Rendition, *, worker: str) -> None:
    """A run stopped while the rendition was publishing: wait for accepted work, settle an
    attempt that was in flight as ambiguous, else publish what is left (segments with an
    id are skipped). Runs under the caller's locks."""
    if accepted_work(rendition):
        resume_waiting(rendition)
    elif not _settle_lost_attempts(rendition, worker=worker):
        rendition.transition_to(Rendition.Status.SCHEDULED)
        schedule_publish(rendition, run_at=timezone.now())


def _settle_lost_attempts(rendition: Rendition, *, worker: str) -> bool:
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
    _fail_ambiguous(
        rendition,
        ProviderError(
            ErrorKind.OUTCOME_UNKNOWN,
            "The worker stopped while the request may have been sent; the post may exist.",
            code="worker_lost",
        ).as_dict(),
    )
    events.emit(events.RENDITION_FAILED, rendition=rendition)
    return True


# --- polling asynchronous platforms --------------------------------------------------------

# Kinds after which we can no longer see the accepted work (the account lost its access,
# or an error we cannot read): a person decides, the work is never sent again.
_CANNOT_TELL = frozenset({ErrorKind.AUTH_EXPIRED, ErrorKind.PERMISSION_MISSING, ErrorKind.UNKNOWN})
# Past this since the platform accepted the work, a person is asked (inside the poll job
# type's wait budget, so the job never ends on its own with the rendition still waiting).
POLL_GIVE_UP = timedelta(hours=23)


def poll(job: Job) -> None:
    """Handler of ``renditions.poll``: ask the platform about a pending segment."""
    rendition_id = job.payload["rendition_id"]
    resumed: dict | None = None
    with holding_lease(job):
        rendition = lock_rendition(rendition_id)
        if rendition.status == Rendition.Status.PUBLISHING:
            # An earlier run of this job died while delivering the thread's next segments.
            resumed = accepted_work(rendition)
            if resumed:  # this job itself goes on waiting for the accepted segment
                for attempt in rendition.delivery_attempts.in_flight():
                    attempt.close(DeliveryAttempt.Outcome.LOST, note="The run stopped.")
                rendition.mark_waiting()
            else:
                _recover_publishing(rendition, worker=job.locked_by)
            publication_refresh_status(rendition.publication)
        elif rendition.status != Rendition.Status.WAITING:
            return
    if rendition.status != Rendition.Status.WAITING:
        return
    if resumed:
        state = {**resumed, "polls": 0, "poll_errors": 0}
        raise Waiting(POLL_INTERVAL.total_seconds(), "waiting resumes", state=state)
    try:
        _poll(job, rendition)
    except _Stop as stop:
        if stop.outcome is not None:
            raise stop.outcome from None
    except JobOutcome:
        raise
    except Exception as exc:
        _hand_over_unexpected(job, rendition_id, exc)
        raise


def _poll(job: Job, rendition: Rendition) -> None:
    accepted_at = datetime.fromisoformat(job.payload["accepted_at"])
    run = _prepare(job, rendition, accepted=True)
    if not isinstance(run.adapter, SupportsStatusPoll):
        raise RuntimeError(f"{rendition.platform} cannot poll a pending segment.")
    segment = rendition.segments.get(position=job.payload["position"])
    attempt = DeliveryAttempt.objects.create(
        rendition=rendition,
        workspace_id=rendition.workspace_id,
        kind=DeliveryAttempt.Kind.POLL,
        segment_position=segment.position,
        job_id=job.pk,
        worker=job.locked_by,
    )
    pending = PublishedSegment(job.payload["pending_id"], pending=True)
    try:
        result = run.adapter.poll_segment(run.ctx, pending)
    except ProviderError as err:
        _save_checkpoint(run)
        unknown = err.kind == ErrorKind.OUTCOME_UNKNOWN
        attempt.close(
            DeliveryAttempt.Outcome.UNKNOWN if unknown else DeliveryAttempt.Outcome.FAILED,
            error=err.as_dict(),
        )
        if err.retryable:
            # The read failed (rate limited, an outage) or the platform asks for patience:
            # the accepted work is untouched, so it is read again later. (An unknown outcome
            # comes from a create some platforms make in this step: never repeated blindly.)
            _poll_again_later(job, rendition, err, accepted_at)
        if err.kind in _CANNOT_TELL or err.kind == ErrorKind.OUTCOME_UNKNOWN:
            _fail(job, rendition, err, hand_over=True)
        # The platform says its processing failed: nothing was published, so the work is
        # no longer accepted and a retry (by the policy or a person) may send it anew.
        _clear_accepted(run)
        _fail(job, rendition, err)
    _save_checkpoint(run)
    if result.pending:
        attempt.close(DeliveryAttempt.Outcome.PENDING, provider_post_id=result.provider_post_id)
        polls = job.payload.get("polls", 0) + 1
        delay = _next_poll_delay(run.adapter, polls_done=polls, accepted_at=accepted_at)
        if delay is None:
            # It may still appear: look for it (where the platform allows), or ask a person.
            _fail(
                job,
                rendition,
                ProviderError(
                    ErrorKind.MEDIA_PROCESSING,
                    "The platform did not finish processing within its time budget; "
                    "the post may still appear.",
                    code="processing_timeout",
                    retryable=False,
                    action=Action.VERIFY,
                ),
                hand_over=True,
            )
        # The platform may hand a new handle for the next step (a carousel's
        # container replacing its children).
        raise Waiting(
            delay,
            "still processing",
            state={"pending_id": result.provider_post_id, "polls": polls, "poll_errors": 0},
        )
    attempt.close(
        DeliveryAttempt.Outcome.PUBLISHED,
        provider_post_id=result.provider_post_id,
        provider_url=result.provider_url,
    )
    record_segment(segment, result)
    _clear_accepted(run)
    with holding_lease(job):
        current = lock_rendition(rendition.pk)
        current.transition_to(Rendition.Status.PUBLISHING)
    run.rendition.status = Rendition.Status.PUBLISHING
    _deliver(run)


def _poll_again_later(
    job: Job, rendition: Rendition, err: ProviderError, accepted_at: datetime
) -> None:
    """A status read failed; the accepted work is untouched, so read again after the
    platform's Retry-After (or a backoff). Never returns."""
    errors = job.payload.get("poll_errors", 0)
    floor_s = max((err.retry_at - db_now()).total_seconds(), 0.0) if err.retry_at else 0.0
    if err.kind == ErrorKind.MEDIA_PROCESSING:  # still processing: not an error of ours
        delay_s = floor_s or POLL_INTERVAL.total_seconds()
    else:
        errors += 1
        delay_s = get_job_type(job.type).backoff.delay(errors, floor_s=floor_s)
    if timezone.now() + timedelta(seconds=delay_s) - accepted_at > POLL_GIVE_UP:
        _fail(job, rendition, err, hand_over=True)
    logger.info(
        "status poll failed (%s); polling again in %.0fs",
        err.kind,
        delay_s,
        extra={"rendition_id": rendition.pk, "job_id": job.pk},
    )
    raise _Stop(Waiting(delay_s, err.message, state={"poll_errors": errors}))


def forget_accepted_work(rendition: Rendition) -> None:
    """A person checked the platform and found nothing: nothing is waited for any more."""
    checkpoint = dict(rendition.checkpoint or {})
    if checkpoint.pop("pending", None) is not None:
        _write_checkpoint(rendition, checkpoint)


def _clear_accepted(run: _Run) -> None:
    """The accepted segment is settled (published, or failed at the platform)."""
    if run.ctx.checkpoint.pop("pending", None) is not None:
        _write_checkpoint(run.rendition, dict(run.ctx.checkpoint))


def _hand_over_unexpected(job: Job, rendition_id: int, exc: Exception) -> None:
    """Our bug while polling accepted work: a person decides; it is never sent again."""
    with holding_lease(job):
        rendition = lock_rendition(rendition_id)
        if rendition.status != Rendition.Status.WAITING:
            return
        rendition.transition_to(Rendition.Status.PUBLISHING)
        _fail_ambiguous(
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

"""The publish job: deliver one rendition, its segments in thread order.

A run starts only when the rendition is due, loads the account and its credentials
(refreshed when near expiry), validates the rendition against the capability catalog, then
sends each segment that has no provider id yet, its attempt row committed before the request
leaves. A segment the platform accepts but is still processing parks the rendition in the
waiting state (``waiting``, ``poll``); the last segment published finishes it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime, timedelta

from django.db import transaction

from apps.accounts import services as account_services
from apps.accounts.crypto import CredentialsError
from apps.accounts.models import SocialAccount
from apps.common import events
from apps.jobs.errors import INTERRUPTIONS, Snooze, Waiting
from apps.jobs.models import Job
from apps.jobs.services import holding_lease
from apps.providers.base import (
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    get_adapter,
)
from apps.providers.errors import RETRYABLE_KINDS, Action, ErrorKind, ProviderError
from apps.publishing.delivery import waiting
from apps.publishing.delivery.comment import start_first_comment
from apps.publishing.delivery.context import (
    fresh_credentials,
    media_payloads,
    publish_context,
)
from apps.publishing.delivery.enqueue import POLL_JOB, enqueue_poll, schedule_publish
from apps.publishing.delivery.failures import fail, fail_unexpected, settle_lost_attempts
from apps.publishing.delivery.run import Run, Stop, db_now, record_segment, save_checkpoint
from apps.publishing.delivery.waiting import accepted_work, resume_waiting
from apps.publishing.locks import RefreshInProgress, lock_rendition
from apps.publishing.services.status import publication_refresh_status
from apps.renditions.models import DeliveryAttempt, Rendition, RenditionSegment
from apps.renditions.selectors import rendition_problems

logger = logging.getLogger(__name__)

# After another worker held the account's refresh lock too long, try again this much later.
REFRESH_WAIT = timedelta(seconds=5)


def publish(job: Job) -> None:
    """Handler of ``renditions.publish``: deliver one rendition."""
    rendition_id = job.payload["rendition_id"]
    with holding_lease(job):
        rendition = lock_rendition(rendition_id)
        if not _start(job, rendition):
            return
    try:
        run = prepare(job, rendition)
        deliver(run)
    except Stop as stop:
        if stop.outcome is not None:
            raise stop.outcome from None
    except INTERRUPTIONS:
        # Not ours to settle: another worker holds the job, or the database failed under
        # this run and nothing was decided (the job is recovered and its next run settles
        # what this one left, an attempt in flight included).
        raise
    except Exception as exc:
        fail_unexpected(job, rendition_id, exc)
        raise


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
        return not settle_lost_attempts(rendition, worker=job.locked_by)
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


def prepare(job: Job, rendition: Rendition, *, accepted: bool = False) -> Run:
    """Account, adapter, credentials (refreshed when near expiry) and validation.
    `accepted`: the platform already holds the work (a status poll), so a failure here
    hands it to a person instead of failing it, and there is nothing left to validate."""
    account = rendition.social_account
    if account.status != SocialAccount.Status.CONNECTED:
        fail(
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
        fail(
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
        fail(
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
    run = Run(
        job=job, rendition=rendition, adapter=adapter, ctx=publish_context(rendition, credentials)
    )
    _refresh_credentials(run, hand_over=accepted)
    problems = [] if accepted else rendition_problems(rendition)
    if problems:
        first = problems[0]
        fail(
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


def _refresh_credentials(run: Run, *, hand_over: bool = False) -> None:
    """Refresh the token when near expiry (``fresh_credentials``); a failure fails the run,
    or, with `hand_over`, only stops it when retrying cannot help."""
    try:
        current = fresh_credentials(run.adapter, run.account.pk)
    except RefreshInProgress:
        if hand_over:
            return  # the poll goes on with the current token
        fail(run.job, run.rendition, refresh_in_progress())
    except ProviderError as err:
        if err.kind in RETRYABLE_KINDS and hand_over:
            return  # the poll goes on with the current token; the refresh is tried again
        fail(run.job, run.rendition, err, hand_over=hand_over)
    if current != run.ctx.credentials:  # refreshed now, or by another worker meanwhile
        run.ctx.credentials.clear()
        run.ctx.credentials.update(current)


def refresh_in_progress() -> ProviderError:
    """Another worker held the account's refresh lock too long: nothing was sent."""
    return ProviderError(
        ErrorKind.NETWORK_BEFORE_SEND,  # a clean retry
        "Another worker was refreshing this account's token; trying again in a moment.",
        code="refresh_in_progress",
        retry_at=db_now() + REFRESH_WAIT,
        retryable=True,
    )


def deliver(run: Run) -> None:
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
        reply_to = (
            ReplyTarget(root=root, parent=parent)
            if root is not None and parent is not None
            else None
        )
        result = _send(run, segment, payload, reply_to)
        if result.pending:
            _park(run, segment, result)
            return
        root, parent = root or result, result
    _finish(run, segments)


def _send(
    run: Run, segment: RenditionSegment, payload: SegmentPayload, reply_to: ReplyTarget | None
) -> PublishedSegment:
    """One segment, with its attempt row committed before the request leaves. Its start
    is stamped on the database clock: reconciliation measures the platform's idempotency
    window from it, and must not inherit this host's clock error."""
    attempt = DeliveryAttempt.objects.create(
        started_at=db_now(),
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
    except INTERRUPTIONS:
        # The attempt stays in flight: whoever runs next settles it as possibly sent.
        raise
    except ProviderError as err:
        save_checkpoint(run)
        duplicate_after_unknown = err.kind == ErrorKind.DUPLICATE_CONTENT and (
            _had_unknown_outcome(run.rendition, segment.position)
        )
        if duplicate_after_unknown and err.existing_post_id:
            # The platform names the post an earlier, unanswered attempt created.
            result = PublishedSegment(err.existing_post_id)
            _record(attempt, segment, result, DeliveryAttempt.Outcome.FOUND)
            return result
        if duplicate_after_unknown:
            # Refused as a duplicate without a post we could confirm: the earlier attempt
            # may still have made one, so the outcome stays unknown (never a plain
            # duplicate) and is handed to the check; the attempt keeps the refusal.
            failed = err.as_dict()
            fail(
                run.job,
                run.rendition,
                _duplicate_after_unknown(err),
                details={"refused": failed},
                closing=lambda: attempt.close(DeliveryAttempt.Outcome.FAILED, error=failed),
            )
        unknown = err.kind == ErrorKind.OUTCOME_UNKNOWN
        outcome = DeliveryAttempt.Outcome.UNKNOWN if unknown else DeliveryAttempt.Outcome.FAILED
        error = err.as_dict()
        fail(run.job, run.rendition, err, closing=lambda: attempt.close(outcome, error=error))
    except Exception as exc:
        # Our bug, or an adapter that let a raw error escape: the request may have left.
        save_checkpoint(run)
        raw = {"kind": "unknown", "message": f"{type(exc).__name__}: {exc}"}
        fail(
            run.job,
            run.rendition,
            ProviderError(
                ErrorKind.OUTCOME_UNKNOWN,
                f"Publishing stopped on an internal error ({type(exc).__name__}); "
                "the post may exist.",
                code="internal_error",
            ),
            closing=lambda: attempt.close(DeliveryAttempt.Outcome.UNKNOWN, error=raw),
        )
    if result.pending:
        # From here on the platform holds this segment: written before anything else, so
        # every later path finds it and waits for it instead of sending it again.
        run.ctx.checkpoint["pending"] = {
            "position": segment.position,
            "pending_id": result.provider_post_id,
            "accepted_at": db_now().isoformat(),
        }
    save_checkpoint(run)
    if result.pending:
        attempt.close(DeliveryAttempt.Outcome.PENDING, provider_post_id=result.provider_post_id)
    else:
        _record(attempt, segment, result, DeliveryAttempt.Outcome.PUBLISHED)
    return result


def _record(
    attempt: DeliveryAttempt, segment: RenditionSegment, result: PublishedSegment, outcome: str
) -> None:
    """Close the attempt and store the segment's post in one commit: a worker killed in
    between leaves the attempt in flight (settled as ambiguous), never closed with a segment
    that looks unsent."""
    with transaction.atomic():
        attempt.close(
            outcome, provider_post_id=result.provider_post_id, provider_url=result.provider_url
        )
        record_segment(segment, result)


def _fingerprint(segment: SegmentPayload, reply_to: ReplyTarget | None) -> str:
    body = {
        "text": segment.text,
        "media": [[m.media_id, m.alt_text] for m in segment.media],
        "reply_to": reply_to.parent.provider_post_id if reply_to else None,
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _duplicate_after_unknown(refusal: ProviderError) -> ProviderError:
    """The rendition's error when a resend is refused as a duplicate of a post we could not
    confirm: the unanswered request may have made the post, so it is an unknown outcome."""
    return ProviderError(
        ErrorKind.OUTCOME_UNKNOWN,
        "An earlier request went unanswered and the post may exist; a resend was refused "
        f"as a duplicate ({refusal.message})",
        code="duplicate_after_unknown",
        http_status=refusal.http_status,
        retryable=False,
    )


def _had_unknown_outcome(rendition: Rendition, position: int) -> bool:
    return rendition.delivery_attempts.filter(
        segment_position=position,
        outcome__in=[DeliveryAttempt.Outcome.UNKNOWN, DeliveryAttempt.Outcome.LOST],
    ).exists()


def _park(run: Run, segment: RenditionSegment, pending: PublishedSegment) -> None:
    """An asynchronous platform is processing the segment: wait for it in a poll job,
    which holds no seat of the organization's in-flight cap."""
    accepted = run.ctx.checkpoint["pending"]
    accepted_at = datetime.fromisoformat(accepted["accepted_at"])
    delay = waiting.next_poll_delay(run.adapter, polls_done=0, accepted_at=accepted_at) or 0.0
    state = {**accepted, "polls": 0}
    with holding_lease(run.job):
        rendition = lock_rendition(run.rendition.pk)
        rendition.mark_waiting()
        if run.job.type != POLL_JOB:
            enqueue_poll(rendition, state, delay)
        publication_refresh_status(rendition.publication)
    if run.job.type == POLL_JOB:
        # The poll job itself carries on with the thread's next pending segment.
        raise Stop(Waiting(delay, "next segment processing", state=state))


def _finish(run: Run, segments: list[RenditionSegment]) -> None:
    first = min(segments, key=lambda s: s.position)
    first.refresh_from_db()
    with holding_lease(run.job):
        rendition = lock_rendition(run.rendition.pk)
        if rendition.status == Rendition.Status.WAITING:
            rendition.transition_to(Rendition.Status.PUBLISHING)
        rendition.mark_published(first.provider_post_id, first.provider_url, first.published_at)
        start_first_comment(rendition)
        events.emit(events.RENDITION_PUBLISHED, rendition=rendition)
        publication_refresh_status(rendition.publication)
    logger.info(
        "rendition published",
        extra={"rendition_id": rendition.pk, "job_id": run.job.pk, "platform": rendition.platform},
    )


def on_publish_stale(job: Job) -> None:
    """Stale recovery of a publish job (its worker stopped heart-beating mid-run).

    If an attempt was in flight, the request may have reached the platform: the rendition
    becomes an ambiguous failure and goes to reconciliation, never blindly resent. If none
    was, nothing left: the rendition is released back to scheduled and runs again.
    """
    rendition = lock_rendition(job.payload["rendition_id"])
    if rendition.status == Rendition.Status.PUBLISHING:
        recover_publishing(rendition, worker=job.locked_by)
    elif rendition.status == Rendition.Status.SCHEDULED or rendition.is_retry_pending:
        schedule_publish(rendition, run_at=rendition.next_retry_at or db_now())
    publication_refresh_status(rendition.publication)


def recover_publishing(rendition: Rendition, *, worker: str) -> None:
    """A run stopped while the rendition was publishing: wait for accepted work, settle an
    attempt that was in flight as ambiguous, else publish what is left (segments with an
    id are skipped). Runs under the caller's locks."""
    if accepted_work(rendition):
        resume_waiting(rendition)
    elif not settle_lost_attempts(rendition, worker=worker):
        rendition.transition_to(Rendition.Status.SCHEDULED)
        schedule_publish(rendition, run_at=db_now())

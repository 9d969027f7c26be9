"""Reconciliation: settling an ambiguous rendition by asking the platform.

After an unknown outcome (sent, no answer) the rendition is an ambiguous failure and this
job looks for our post:
- found: the segment gets the post's id; the rendition is published (or, for a thread,
  the remaining segments are scheduled, never the found one again);
- proven absent (an exact lookup said no): a clean retry is scheduled;
- not found by a best-effort lookup: looked for again later (platforms are eventually
  consistent), then left to a person with the action "verify";
- an idempotency key the platform still honours, and no exact lookup: resent under the same
  key at once (the platform returns the original post if there is one), before a
  best-effort lookup that could miss it;
- no unanswered request could have made the post (a Meta container's create, invisible
  until the poll publishes it): resent at once, nothing to look for;
- the platform's own state proves the segment was never posted and will not be (a Meta
  container read ERROR, or EXPIRED after its one renewal): a plain failure with the
  platform's reason, not a person's check;
- accepted work (a segment the platform holds and was processing) is never resent: if the
  lookup does not find it, a person decides;
- no lookup, but a duplicate resend is refused naming the post (LinkedIn): resent once the
  unanswered request can no longer land, unless the refusal would not cover the content,
  the platform's duplicate window has passed, or a resend was already refused naming a
  post that could not be confirmed as ours; then a person decides.

A throttled lookup decides nothing: the check comes again after the platform's reset,
without spending an attempt while the job's snooze budget lasts (never a resend).

While a check is scheduled the rendition's error says action ``wait`` with ``check_at``;
when no check will come it says ``verify``: a person is needed. An account that must be
reconnected first says ``reconnect``: the check runs again once it is (see reconnect.py).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import NoReturn

from django.conf import settings

from apps.accounts import services as account_services
from apps.accounts.crypto import CredentialsError
from apps.accounts.models import SocialAccount
from apps.common import events
from apps.common.db_clock import db_now
from apps.jobs.errors import PermanentError, RetryableError, Snooze, delay_seconds
from apps.jobs.models import Job
from apps.jobs.registry import get_job_type
from apps.jobs.services import holding_lease
from apps.providers.base import (
    Adapter,
    PublishContext,
    PublishedSegment,
    SegmentPayload,
    SupportsLookup,
    get_adapter,
)
from apps.providers.errors import ErrorKind, ProviderError
from apps.publishing.delivery.comment import start_first_comment
from apps.publishing.delivery.context import media_payloads, publish_context
from apps.publishing.delivery.enqueue import schedule_publish
from apps.publishing.delivery.failures import post_making_attempts, within_key_window
from apps.publishing.delivery.reconnect import await_reconnect
from apps.publishing.delivery.run import record_segment
from apps.publishing.delivery.unanswered import still_remembered
from apps.publishing.delivery.waiting import accepted_work, forget_accepted_work, resume_waiting
from apps.publishing.locks import lock_rendition
from apps.publishing.services.status import publication_refresh_status
from apps.renditions.models import DeliveryAttempt, Rendition, RenditionSegment

logger = logging.getLogger(__name__)

NOT_FOUND_YET = "not_found_yet"
# Look this far before the unanswered attempt started, for clock differences.
LOOKUP_SLACK = timedelta(minutes=2)
# The least wait after a throttled lookup.
THROTTLED_MIN_WAIT_S = 5.0


def reconcile(job: Job) -> None:
    """Handler of ``renditions.reconcile``."""
    with holding_lease(job):
        rendition = lock_rendition(job.payload["rendition_id"])
        if not (rendition.status == Rendition.Status.FAILED and rendition.ambiguous):
            return  # settled meanwhile (by a person, or an earlier run)
    try:
        _reconcile(job, rendition)
    except RetryableError as retry:
        job_type = get_job_type(job.type)
        if not job_type.may_retry(retry.kind, job.attempts, job.max_attempts):
            _hand_to_person(job, rendition, f"Still not settled after {job.attempts} checks.")
            raise PermanentError(retry.kind, retry.message) from None
        delay_s = job_type.backoff.delay(job.attempts, floor_s=delay_seconds(retry.retry_at))
        _checking_again(job, rendition, db_now() + timedelta(seconds=delay_s))
        raise RetryableError(
            retry.kind, retry.message, retry_at=timedelta(seconds=delay_s), exact=True
        ) from None
    except PermanentError as error:
        _hand_to_person(job, rendition, error.message)
        raise


def _reconcile(job: Job, rendition: Rendition) -> None:
    account = rendition.social_account
    if account.status != SocialAccount.Status.CONNECTED:
        await_reconnect(job, rendition)
        return
    try:
        credentials = account_services.social_account_credentials(account)
    except CredentialsError as exc:
        raise PermanentError("credentials_unreadable", str(exc)) from exc
    adapter = get_adapter(rendition.platform)
    ctx = publish_context(rendition, credentials)
    segment = rendition.segments.filter(provider_post_id="").order_by("position").first()
    if segment is None:
        _settle(job, rendition, note="every segment already had its post")
        return
    sent = (
        rendition.delivery_attempts.filter(
            segment_position=segment.position,
            outcome__in=[DeliveryAttempt.Outcome.UNKNOWN, DeliveryAttempt.Outcome.LOST],
        )
        .order_by("started_at")
        .first()
    )
    accepted = accepted_work(rendition) is not None
    if _settled_without_lookup(job, rendition, adapter, ctx, segment, sent, accepted=accepted):
        return
    assert isinstance(adapter, SupportsLookup)
    not_before = (sent.started_at if sent else rendition.updated_at) - LOOKUP_SLACK
    try:
        found = _look_up(job, rendition, adapter, ctx, segment, not_before=not_before)
    except _NothingPosted as settled:
        _fail_as_not_posted(job, rendition, settled.error)
        return
    if found is not None and found.pending:
        # The platform holds our work but has not published it yet (a container still
        # processing, a video not ready): it is waited for, never called published.
        _wait_for(job, rendition, segment.position, found.provider_post_id)
        return
    if found is not None:
        record_segment(segment, found)
        _settle(job, rendition, note="found on the platform")
        return
    _absent(job, rendition, adapter, sent, accepted=accepted)


def _settled_without_lookup(
    job: Job,
    rendition: Rendition,
    adapter: Adapter,
    ctx: PublishContext,
    segment: RenditionSegment,
    sent: DeliveryAttempt | None,
    *,
    accepted: bool,
) -> bool:
    """Where no lookup is the way: a resend when no unanswered request could have made the
    post, or under an idempotency key the platform still honours (it cannot post twice, a
    best-effort lookup could miss), or a platform with no lookup at all. True when that
    settled the job's next step."""
    if not accepted and _nothing_unanswered_could_post(rendition, segment.position):
        _resend(job, rendition, note="no unanswered request could have made the post")
        return True
    exact_lookup = isinstance(adapter, SupportsLookup) and adapter.lookup_is_strong
    if (
        not accepted
        and not exact_lookup
        and adapter.is_retry_safe(rendition.social_account)
        and adapter.resend_settles(ctx)
        and within_key_window(adapter, sent)
    ):
        _resend(job, rendition, note="resent under the same idempotency key")
        return True
    if isinstance(adapter, SupportsLookup):
        return False
    if not accepted and adapter.duplicate_refusal_names_post:
        payload = SegmentPayload(segment.position, segment.text, media_payloads(segment))
        _resend_once_settled(job, rendition, sent, adapter, payload)
        return True
    raise PermanentError("no_lookup", "The platform offers no way to check; verify it.")


def _nothing_unanswered_could_post(rendition: Rendition, position: int) -> bool:
    """Whether every unanswered request of the segment was a step that makes no post (a
    Meta container's create): there is nothing to look for, and a resend is safe."""
    unanswered = rendition.delivery_attempts.filter(
        segment_position=position,
        outcome__in=[DeliveryAttempt.Outcome.UNKNOWN, DeliveryAttempt.Outcome.LOST],
    )
    return (
        unanswered.exists()
        and not post_making_attempts(rendition).filter(pk__in=unanswered.values("pk")).exists()
    )


def _look_up(
    job: Job,
    rendition: Rendition,
    adapter: SupportsLookup,
    ctx: PublishContext,
    segment: RenditionSegment,
    *,
    not_before: datetime,
) -> PublishedSegment | None:
    """Ask the platform for the segment's post, recorded as a reconcile attempt (found,
    pending or absent); a throttled or failed lookup decides nothing."""
    attempt = DeliveryAttempt.objects.create(
        rendition=rendition,
        workspace_id=rendition.workspace_id,
        kind=DeliveryAttempt.Kind.RECONCILE,
        segment_position=segment.position,
        job_id=job.pk,
        worker=job.locked_by,
        idempotency_key=ctx.idempotency_key(segment.position),
    )
    payload = SegmentPayload(segment.position, segment.text, media_payloads(segment))
    try:
        found = adapter.lookup_segment(ctx, payload, not_before=not_before)
    except ProviderError as err:
        if err.nothing_posted:
            attempt.close(DeliveryAttempt.Outcome.ABSENT, error=err.as_dict())
            raise _NothingPosted(err) from None
        attempt.close(DeliveryAttempt.Outcome.FAILED, error=err.as_dict())
        if err.kind == ErrorKind.RATE_LIMITED:
            _lookup_throttled(job, rendition, err)
        if err.retryable:
            raise RetryableError(err.kind, err.message, retry_at=err.retry_at) from None
        raise PermanentError(err.kind, err.message, details=err.as_dict()) from None
    if found is None:
        attempt.close(DeliveryAttempt.Outcome.ABSENT)
    elif found.pending:
        attempt.close(DeliveryAttempt.Outcome.PENDING, provider_post_id=found.provider_post_id)
    else:
        attempt.close(
            DeliveryAttempt.Outcome.FOUND,
            provider_post_id=found.provider_post_id,
            provider_url=found.provider_url,
        )
    return found


def _absent(
    job: Job,
    rendition: Rendition,
    adapter: Adapter,
    sent: DeliveryAttempt | None,
    *,
    accepted: bool,
) -> None:
    """The lookup found nothing: look again, resend once the absence can be trusted, or
    hand the rendition to a person."""
    if accepted:
        # The platform accepted this work: it is never sent again by us.
        if job.attempts < job.max_attempts:
            raise RetryableError(NOT_FOUND_YET, "The accepted post is not found yet.")
        raise PermanentError(
            "not_found", "The platform accepted the post but it cannot be found; verify it."
        )
    if adapter.lookup_is_strong:
        # Absence now is not absence for good: the unanswered request may still be on its
        # way through the platform. Without an idempotency key to make a resend harmless,
        # trust the absence only once such a request can no longer land.
        settled_at = _settled_at(rendition, sent)
        if adapter.is_retry_safe(rendition.social_account) or db_now() >= settled_at:
            _resend(job, rendition, note="the platform has no such post")
            return
        raise RetryableError(
            NOT_FOUND_YET,
            "Not found yet; looking again once the unanswered request cannot land.",
            retry_at=settled_at,
            exact=True,
        )
    if job.attempts < job.max_attempts:
        raise RetryableError(NOT_FOUND_YET, "Not found yet; looking again later.")
    raise PermanentError(
        "not_found", "Not found by a best-effort lookup; a person must verify the platform."
    )


class _NothingPosted(Exception):  # noqa: N818 - control flow
    """The lookup's answer proves the segment was never posted (`nothing_posted`)."""

    def __init__(self, error: ProviderError) -> None:
        super().__init__(error.message)
        self.error = error


def _fail_as_not_posted(job: Job, rendition: Rendition, err: ProviderError) -> None:
    """The platform's own state says the segment was never posted and will not be (a Meta
    container read EXPIRED after its one renewal, or ERROR; every earlier container of the
    segment was read unpublished before it was replaced). The outcome is known: a plain
    failure with the platform's reason and what to do, not a person's check."""
    with holding_lease(job):
        current = lock_rendition(rendition.pk)
        if not (current.status == Rendition.Status.FAILED and current.ambiguous):
            return
        forget_accepted_work(current)
        # Failed again, now plainly: the states pass through a run that sent nothing.
        current.mark_scheduled()
        current.transition_to(Rendition.Status.PUBLISHING, next_retry_at=None)
        current.mark_failed(err.as_dict())
        events.emit(events.RENDITION_FAILED, rendition=current)
        publication_refresh_status(current.publication)
    logger.info(
        "ambiguous rendition settled as not posted: %s",
        err.code,
        extra={"rendition_id": rendition.pk},
    )


def _lookup_throttled(job: Job, rendition: Rendition, err: ProviderError) -> NoReturn:
    """The platform throttled the lookup: nothing was learnt, so nothing is decided. The
    check comes again once the platform's reset has passed, without spending one of the
    job's attempts (a run of throttled lookups must not hand the rendition to a person), as
    long as the job's snooze budget lasts; past it, each throttled check spends an attempt
    like any other retryable failure."""
    job_type = get_job_type(job.type)
    delay_s = (
        delay_seconds(err.retry_at)
        if err.retry_at is not None
        else job_type.backoff.delay(max(job.attempts, 1))
    )
    # A reset already past (clocks differ) must not spin the check against the limit.
    delay_s = max(delay_s, THROTTLED_MIN_WAIT_S)
    if job.snoozed_s + delay_s <= job_type.snooze_budget_s:
        _checking_again(job, rendition, db_now() + timedelta(seconds=delay_s))
        raise Snooze(timedelta(seconds=delay_s), f"The lookup was throttled: {err.message}")
    raise RetryableError(err.kind, err.message, retry_at=err.retry_at)


def _settled_at(rendition: Rendition, sent: DeliveryAttempt | None):
    """When an unanswered request of `sent` can no longer land at the platform."""
    started = sent.started_at if sent else rendition.updated_at
    return started + timedelta(seconds=settings.RECONCILE_SETTLE_S)


def _resend_once_settled(
    job: Job,
    rendition: Rendition,
    sent: DeliveryAttempt | None,
    adapter: Adapter,
    payload: SegmentPayload,
) -> None:
    """No lookup, but a duplicate is refused naming the existing post: resend once the
    unanswered request cannot land any more (before, both could arrive and make two).
    Never when the refusal would not cover this content, once a resend was refused without
    a post we could confirm, or past the platform's duplicate window: each time a resend
    could make a second post or settle nothing, so a person verifies."""
    if not adapter.duplicate_refusal_covers(payload):
        raise PermanentError(
            "duplicate_not_refused",
            "The platform does not refuse this content as a duplicate (it has no text), so "
            "it is not resent; verify on the platform whether the post exists.",
        )
    if _resend_refused_unconfirmed(rendition, sent, payload.position):
        raise PermanentError(
            "duplicate_unconfirmed",
            "A resend was refused as a duplicate, but the post the platform named could not "
            "be confirmed as ours; verify on the platform whether the post exists.",
        )
    started = sent.started_at if sent else rendition.updated_at
    window = adapter.duplicate_window
    if window is not None and not still_remembered(started, window):
        raise PermanentError(
            "duplicate_window_passed",
            "Too long since the unanswered attempt for the platform to refuse a resend as a "
            "duplicate; verify on the platform whether the post exists.",
        )
    settled_at = _settled_at(rendition, sent)
    if db_now() >= settled_at:
        _resend(job, rendition, note="resent: a duplicate is refused naming the post")
        return
    raise RetryableError(
        NOT_FOUND_YET,
        "Resending once the unanswered request cannot land; a duplicate names the post.",
        retry_at=settled_at,
        exact=True,
    )


def _resend_refused_unconfirmed(
    rendition: Rendition, sent: DeliveryAttempt | None, position: int
) -> bool:
    """Whether a resend after the unanswered attempt was refused as a duplicate without
    naming a post we could confirm (a confirmed one would have settled the rendition)."""
    refused = rendition.delivery_attempts.filter(
        segment_position=position,
        kind=DeliveryAttempt.Kind.PUBLISH,
        error__kind=str(ErrorKind.DUPLICATE_CONTENT),
    )
    if sent is not None:
        refused = refused.filter(started_at__gt=sent.started_at)
    return refused.exists()


def _wait_for(job: Job, rendition: Rendition, position: int, pending_id: str) -> None:
    """Hand the found-but-unfinished work to the waiting state (and its poll job)."""
    with holding_lease(job):
        current = lock_rendition(rendition.pk)
        if not (current.status == Rendition.Status.FAILED and current.ambiguous):
            return
        checkpoint = dict(current.checkpoint or {})
        checkpoint["pending"] = {
            "position": position,
            "pending_id": pending_id,
            "accepted_at": db_now().isoformat(),
        }
        Rendition.objects.filter(pk=current.pk).update(checkpoint=checkpoint)
        current.checkpoint = checkpoint
        resume_waiting(current)
        publication_refresh_status(current.publication)
    logger.info("ambiguous rendition found pending; waiting", extra={"rendition_id": rendition.pk})


def _checking_again(job: Job, rendition: Rendition, check_at) -> None:
    """Show when the next automatic check runs (action `wait`)."""
    _set_error(job, rendition, action="wait", check_at=check_at.isoformat())


def _hand_to_person(job: Job, rendition: Rendition, why: str) -> None:
    """No automatic check will settle it: a person must look (action `verify`)."""
    _set_error(job, rendition, action="verify", check_at=None, reconcile_note=why)


def _set_error(job: Job, rendition: Rendition, **changes) -> None:
    with holding_lease(job):
        current = lock_rendition(rendition.pk)
        if not (current.status == Rendition.Status.FAILED and current.ambiguous):
            return
        error = {**(current.last_error or {}), **changes}
        if error.get("check_at") is None:
            error.pop("check_at", None)
        Rendition.objects.filter(pk=current.pk, status=Rendition.Status.FAILED).update(
            last_error=error
        )


def _settle(job: Job, rendition: Rendition, *, note: str) -> None:
    """The unanswered segment exists: finish the rendition, or schedule the rest of a
    thread (segments with an id are skipped by the publish job)."""
    with holding_lease(job):
        current = lock_rendition(rendition.pk)
        if not (current.status == Rendition.Status.FAILED and current.ambiguous):
            return
        segments = list(current.segments.order_by("position"))
        if all(s.is_published for s in segments):
            first = segments[0]
            current.mark_published(first.provider_post_id, first.provider_url, first.published_at)
            start_first_comment(current)
            events.emit(events.RENDITION_PUBLISHED, rendition=current)
        else:
            current.mark_scheduled()
            schedule_publish(current, run_at=db_now())
        publication_refresh_status(current.publication)
    logger.info("ambiguous rendition settled: %s", note, extra={"rendition_id": rendition.pk})


def _resend(job: Job, rendition: Rendition, *, note: str) -> None:
    """Absence is proven (or the key makes a resend harmless): a clean retry."""
    with holding_lease(job):
        current = lock_rendition(rendition.pk)
        if not (current.status == Rendition.Status.FAILED and current.ambiguous):
            return
        current.mark_scheduled()
        schedule_publish(current, run_at=db_now())
        publication_refresh_status(current.publication)
    logger.info("ambiguous rendition rescheduled: %s", note, extra={"rendition_id": rendition.pk})

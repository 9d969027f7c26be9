"""The first-comment job: post a publication's first comment under one live post.

A rendition that publishes gets its FirstComment row and this job in the transaction that
marks it published (``start_first_comment``). The job sends the comment with its attempt
row committed first, exactly like a segment: a run that finds an attempt without an answer
(in flight when its worker died, or unanswered) looks the comment up before anything is
sent again, and sends again only where "not found" proves there is none, or under the
comment's idempotency key where the platform honours it. Otherwise, where the platform's
lookup cannot prove it, the comment is left ``unknown`` for a person; nothing is ever
guessed into a second comment. The post itself stands whatever the comment does.

"Not found" concludes nothing before RECONCILE_SETTLE_S has passed since the unanswered
send; the rule, shared with inbox replies, lives in ``unanswered``.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.common.db_clock import db_now
from apps.common.errors import Conflict
from apps.jobs.errors import INTERRUPTIONS, RetryableError
from apps.jobs.models import Job
from apps.jobs.services import holding_lease, job_enqueue
from apps.providers.base import PublishedSegment, SupportsFirstComment, get_adapter
from apps.providers.catalog import get_capabilities
from apps.providers.errors import RETRYABLE_KINDS, Action, ErrorKind, ProviderError
from apps.publishing.delivery import unanswered
from apps.publishing.delivery.context import credentials_for_call, publish_context
from apps.renditions.models import DeliveryAttempt, FirstComment, Rendition

logger = logging.getLogger(__name__)

COMMENT_JOB = "renditions.first_comment"
# The error kind of a lookup that found nothing yet where absence cannot be proven.
NOT_FOUND_YET = "comment_not_found_yet"
WRITE = unanswered.Write("comment", NOT_FOUND_YET, "the post's comments")
# What the job retries: the platform's passing troubles, and an unanswered comment (the
# next run looks it up before anything is sent again).
RETRY_KINDS = frozenset({*RETRYABLE_KINDS, ErrorKind.OUTCOME_UNKNOWN, NOT_FOUND_YET})


def comment_dedupe_key(comment_id: int) -> str:
    return f"comment:{comment_id}"


def comment_idempotency_key(rendition_id: int) -> str:
    return f"rendition-{rendition_id}-comment"


def start_first_comment(rendition: Rendition) -> FirstComment | None:
    """Create the rendition's first comment and its job, in the caller's transaction (the
    one marking the post published), if its publication has one and the platform takes it."""
    text = (rendition.publication.first_comment or "").strip()
    if not text or not get_capabilities(rendition.platform).supports_first_comment:
        return None
    comment, created = FirstComment.objects.get_or_create(
        rendition=rendition, defaults={"workspace_id": rendition.workspace_id, "text": text}
    )
    if created:
        enqueue_comment(comment, rendition)
    return comment


def enqueue_comment(comment: FirstComment, rendition: Rendition) -> Job:
    return job_enqueue(
        type=COMMENT_JOB,
        payload={"comment_id": comment.pk},
        organization=None,
        workspace=rendition.workspace,
        dedupe_key=comment_dedupe_key(comment.pk),
        lane=rendition.platform,
    )


def post_first_comment(job: Job) -> None:
    """Handler of ``renditions.first_comment``."""
    with holding_lease(job), transaction.atomic():
        comment = (
            FirstComment.objects.select_for_update(of=("self",))
            .select_related("rendition__social_account", "rendition__workspace")
            .filter(pk=job.payload["comment_id"])
            .first()
        )
        if comment is None or comment.status != FirstComment.Status.PENDING:
            return  # posted, settled by a person, or gone with its post
        # A run that finds an attempt still in flight is the next one: the last one died.
        _attempts(comment).filter(outcome=DeliveryAttempt.Outcome.IN_FLIGHT).update(
            outcome=DeliveryAttempt.Outcome.LOST, finished_at=timezone.now()
        )
    rendition = comment.rendition
    last_try = job.attempts >= job.max_attempts
    try:
        adapter, ctx = _connect(rendition)
        post = PublishedSegment(rendition.provider_post_id, rendition.provider_url)
        key = comment_idempotency_key(rendition.pk)
        doubt = _unanswered(comment)
        if doubt is not None and _look_up(
            job, comment, adapter, ctx, post, key, last_try, unanswered.settled_at(doubt)
        ):
            return
        _send(job, comment, adapter, ctx, post, key)
    except ProviderError as err:
        if err.kind in RETRY_KINDS and not last_try:
            raise RetryableError(err.kind, err.message, retry_at=err.retry_at) from err
        # A refusal settles nothing about an earlier send left in doubt: still unknown.
        unknown = err.kind == ErrorKind.OUTCOME_UNKNOWN or _unanswered(comment) is not None
        _settle(
            comment, FirstComment.Status.UNKNOWN if unknown else FirstComment.Status.FAILED, err
        )
    except unanswered.LOOKS_AGAIN:
        raise
    except INTERRUPTIONS:
        # A database error decided nothing: the job is recovered, and its next run finds
        # the attempt left in flight and looks the comment up before sending anything.
        raise
    except Exception as exc:
        # Our bug: never left pending with nobody coming back; a person checks the post.
        _settle(
            comment,
            FirstComment.Status.UNKNOWN,
            ProviderError(
                ErrorKind.UNKNOWN,
                f"The comment could not be posted ({type(exc).__name__}); check the post.",
                code="comment_errored",
                action=Action.VERIFY,
                retryable=False,
            ),
        )
        raise


def _attempts(comment: FirstComment):
    """The comment's attempts, lookups and resolutions (they carry its key)."""
    return DeliveryAttempt.objects.filter(
        rendition_id=comment.rendition_id,
        idempotency_key=comment_idempotency_key(comment.rendition_id),
    )


def _connect(rendition: Rendition):
    """The adapter and a publish context with fresh credentials; ProviderError when the
    account cannot be used now."""
    account = rendition.social_account
    if account.status != SocialAccount.Status.CONNECTED:
        raise ProviderError(
            ErrorKind.AUTH_EXPIRED,
            f"The {account.platform} account @{account.handle} must be reconnected.",
            code=f"account_{account.status}",
        )
    adapter = get_adapter(rendition.platform)
    if not isinstance(adapter, SupportsFirstComment):
        raise ProviderError(
            ErrorKind.PLAN_RESTRICTED,
            f"Comments on {rendition.platform} are not available on this installation.",
            code="no_comment_support",
            retryable=False,
        )
    credentials = credentials_for_call(adapter, account.pk)
    return adapter, publish_context(rendition, credentials)


def _unanswered(comment: FirstComment) -> DeliveryAttempt | None:
    kinds = DeliveryAttempt.Kind
    return unanswered.last_unanswered(_attempts(comment), send=kinds.COMMENT, resolve=kinds.RESOLVE)


def _look_up(job, comment, adapter, ctx, post, key, last_try: bool, settle_at: datetime) -> bool:
    """After an attempt without an answer: True when that settled the comment (found, or
    left to a person), False when nothing exists and sending is safe (``unanswered``)."""
    attempt = _attempt(job, comment, DeliveryAttempt.Kind.RECONCILE, key)
    try:
        found = adapter.find_comment(ctx, post, comment.text, key=key)
    except ProviderError as err:
        if not unanswered.lookup_failed(job, attempt, err, last_try=last_try):
            raise
        _to_person(comment)
        return True
    if found is not None:
        attempt.close(
            DeliveryAttempt.Outcome.FOUND,
            provider_post_id=found.provider_post_id,
            provider_url=found.provider_url,
        )
        _published(comment, found)
        return True
    strong = adapter.comment_lookup_is_strong
    if unanswered.not_found(
        job,
        attempt,
        WRITE,
        settle_at=settle_at,
        strong=strong,
        last_try=last_try,
        resend_under_key=_key_answers(adapter, comment),
    ):
        return False
    _to_person(comment)
    return True


def _to_person(comment: FirstComment) -> None:
    _settle(
        comment,
        FirstComment.Status.UNKNOWN,
        ProviderError(
            ErrorKind.OUTCOME_UNKNOWN,
            "The comment was sent without an answer and the platform does not list it; "
            "check the post, then mark the comment posted or post it again.",
            code="comment_outcome_unknown",
            action=Action.VERIFY,
        ),
    )


@runtime_checkable
class KeyedComments(Protocol):
    """A platform whose comment create honours the comment's idempotency key: a resend
    under it returns the first comment (or is refused while that one's create runs)."""

    idempotency_window: timedelta | None

    def comment_key_is_honoured(self, account: SocialAccount) -> bool: ...


def _key_answers(adapter, comment: FirstComment) -> bool:
    """Whether a resend under the comment's key would return a comment already made."""
    if not isinstance(adapter, KeyedComments):
        return False
    first_send = _attempts(comment).filter(kind=DeliveryAttempt.Kind.COMMENT).order_by("pk")
    return unanswered.key_answers(
        first_send.first(),
        honoured=adapter.comment_key_is_honoured(comment.rendition.social_account),
        window=adapter.idempotency_window,
    )


def _send(job, comment, adapter, ctx, post, key) -> None:
    attempt = _attempt(job, comment, DeliveryAttempt.Kind.COMMENT, key)
    try:
        result = adapter.publish_comment(ctx, post, comment.text, key=key)
    except ProviderError as err:
        unanswered.refused_in_progress(job, attempt, WRITE, err)
        unknown = err.kind == ErrorKind.OUTCOME_UNKNOWN
        outcome = DeliveryAttempt.Outcome.UNKNOWN if unknown else DeliveryAttempt.Outcome.FAILED
        attempt.close(outcome, error=err.as_dict())
        raise
    except INTERRUPTIONS:
        raise  # the attempt stays in flight: the next run looks the comment up first
    except Exception as exc:
        # Our bug, or an adapter that let a raw error escape: the comment may exist.
        raw = {"kind": "unknown", "message": f"{type(exc).__name__}: {exc}"}
        attempt.close(DeliveryAttempt.Outcome.UNKNOWN, error=raw)
        raise
    with transaction.atomic():
        attempt.close(
            DeliveryAttempt.Outcome.PUBLISHED,
            provider_post_id=result.provider_post_id,
            provider_url=result.provider_url,
        )
        _published(comment, result)


def _attempt(job: Job, comment: FirstComment, kind: str, key: str) -> DeliveryAttempt:
    """The attempt row, committed before the request leaves; it starts on the database
    clock, which the settle window of an unanswered send is measured on."""
    return DeliveryAttempt.objects.create(
        started_at=db_now(),
        rendition_id=comment.rendition_id,
        workspace_id=comment.workspace_id,
        kind=kind,
        job_id=job.pk,
        worker=job.locked_by,
        idempotency_key=key,
        request_fingerprint=hashlib.sha256(comment.text.encode()).hexdigest(),
    )


def _published(comment: FirstComment, result: PublishedSegment) -> None:
    comment.mark_published(result.provider_post_id, result.provider_url, result.published_at)
    logger.info(
        "first comment published",
        extra={"rendition_id": comment.rendition_id, "comment_id": comment.pk},
    )


def _settle(comment: FirstComment, status: str, err: ProviderError) -> None:
    """The comment failed (or is left to a person): recorded on it, its post untouched."""
    comment.move({FirstComment.Status.PENDING}, status, last_error=err.as_dict())
    logger.warning(
        "first comment %s: %s",
        status,
        err.message,
        extra={"rendition_id": comment.rendition_id, "comment_id": comment.pk},
    )


def first_comment_retry(comment: FirstComment, *, actor_note: str = "") -> FirstComment:
    """A person asks for a failed or unknown comment to be posted again. For an unknown
    one they checked the post and found none: that is recorded (a resolve attempt), so the
    job sends it without looking again."""
    with transaction.atomic():
        locked = FirstComment.objects.select_for_update().get(pk=comment.pk)
        if locked.status not in (FirstComment.Status.FAILED, FirstComment.Status.UNKNOWN):
            raise Conflict(
                f"The first comment is {locked.status}; only a failed comment, or one whose "
                "outcome is unknown, can be posted again.",
                code="FIRST_COMMENT_NOT_RETRYABLE",
                details={"status": locked.status},
            )
        if locked.status == FirstComment.Status.UNKNOWN:
            _resolution(locked, DeliveryAttempt.Outcome.ABSENT, actor_note or "No comment found.")
        locked.move({locked.status}, FirstComment.Status.PENDING, last_error=None)
        rendition = Rendition.objects.select_related("workspace").get(pk=locked.rendition_id)
        enqueue_comment(locked, rendition)
    return locked


def first_comment_mark_posted(comment: FirstComment, *, url: str = "") -> FirstComment:
    """A person found the comment whose answer never came: record it as posted."""
    with transaction.atomic():
        locked = FirstComment.objects.select_for_update().get(pk=comment.pk)
        if locked.status != FirstComment.Status.UNKNOWN:
            raise Conflict(
                f"The first comment is {locked.status}; only one whose outcome is unknown "
                "can be marked posted.",
                code="FIRST_COMMENT_NOT_UNKNOWN",
                details={"status": locked.status},
            )
        _resolution(locked, DeliveryAttempt.Outcome.RESOLVED, "Found on the post.")
        locked.mark_published(PERSON_FOUND_IT, url)
    return locked


# The comment id recorded when a person, not the platform, confirmed the comment exists.
PERSON_FOUND_IT = "confirmed-by-person"


def _resolution(comment: FirstComment, outcome: str, note: str) -> None:
    now = timezone.now()
    DeliveryAttempt.objects.create(
        rendition_id=comment.rendition_id,
        workspace_id=comment.workspace_id,
        kind=DeliveryAttempt.Kind.RESOLVE,
        idempotency_key=comment_idempotency_key(comment.rendition_id),
        outcome=outcome,
        note=note,
        finished_at=now,
    )

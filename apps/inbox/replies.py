"""Replies from the inbox: a write to a platform, under the first comment's rules.

A reply is created pending (or awaiting an admin's approval where the workspace asks for
it) and sent by its job. The job commits its attempt row before the request leaves; a run
that finds a send without an answer (in flight when its worker died, or unanswered) looks
the reply up before anything is sent again, and sends again only where "not found" proves
there is none. Where the platform's lookup cannot prove it, the reply is left ``unknown``
for a person: nothing is ever guessed into a second reply.

"Not found" concludes nothing before RECONCILE_SETTLE_S has passed since the unanswered
send; the rule, shared with first comments, lives in
``apps.publishing.delivery.unanswered``.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from apps.accounts.models import User
from apps.common import events
from apps.common.db_clock import db_now
from apps.common.errors import Conflict, ValidationFailed
from apps.jobs.errors import INTERRUPTIONS, RetryableError
from apps.jobs.models import Job
from apps.jobs.services import holding_lease, job_enqueue
from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.comment_reading import CommentReader
from apps.providers.errors import RETRYABLE_KINDS, Action, ErrorKind, ProviderError
from apps.publishing.delivery import unanswered

from .connect import connect, published_post
from .models import Comment, Reply, ReplyAttempt

logger = logging.getLogger(__name__)

REPLY_JOB = "inbox.reply"
A = ReplyAttempt
NOT_FOUND_YET = "reply_not_found_yet"
WRITE = unanswered.Write("reply", NOT_FOUND_YET, "the comment's replies")
RETRY_KINDS = frozenset({*RETRYABLE_KINDS, ErrorKind.OUTCOME_UNKNOWN, NOT_FOUND_YET})


def reply_dedupe_key(reply_id: int) -> str:
    return f"inbox-reply:{reply_id}"


def enqueue_reply(reply: Reply) -> Job:
    return job_enqueue(
        type=REPLY_JOB,
        payload={"reply_id": reply.pk},
        organization=None,
        workspace=reply.comment.workspace,
        dedupe_key=reply_dedupe_key(reply.pk),
        lane=reply.comment.platform,
    )


def send_reply(job: Job) -> None:
    """Handler of ``inbox.reply``."""
    with holding_lease(job), transaction.atomic():
        reply = (
            Reply.objects.select_for_update(of=("self",))
            .select_related("comment__rendition__social_account")
            .filter(pk=job.payload["reply_id"])
            .first()
        )
        if reply is None or reply.status != Reply.Status.PENDING:
            return  # sent, settled by a person, or gone with its comment
        # A run that finds a send still in flight is the next one: the last one died.
        reply.attempts.filter(outcome=A.Outcome.IN_FLIGHT).update(
            outcome=A.Outcome.LOST, finished_at=timezone.now()
        )
    last_try = job.attempts >= job.max_attempts
    try:
        reader, ctx = connect(reply.comment.rendition)
        doubt = _unanswered(reply)
        if doubt is not None and _look_up(
            job, reply, reader, ctx, last_try, unanswered.settled_at(doubt)
        ):
            return
        _send(job, reply, reader, ctx)
    except ProviderError as err:
        if err.kind in RETRY_KINDS and not last_try:
            raise RetryableError(err.kind, err.message, retry_at=err.retry_at) from err
        # A refusal settles nothing about an earlier send left in doubt: still unknown.
        unknown = err.kind == ErrorKind.OUTCOME_UNKNOWN or _unanswered(reply) is not None
        _settle(reply, Reply.Status.UNKNOWN if unknown else Reply.Status.FAILED, err)
    except unanswered.LOOKS_AGAIN:
        raise
    except INTERRUPTIONS:
        # A database error decided nothing: the next run finds the send in flight and
        # looks the reply up before sending anything.
        raise
    except Exception as exc:
        # Our bug: never left pending with nobody coming back; a person checks the thread.
        _settle(
            reply,
            Reply.Status.UNKNOWN,
            ProviderError(
                ErrorKind.UNKNOWN,
                f"The reply could not be sent ({type(exc).__name__}); check the thread.",
                code="reply_errored",
                action=Action.VERIFY,
                retryable=False,
            ),
        )
        raise


def _unanswered(reply: Reply) -> ReplyAttempt | None:
    return unanswered.last_unanswered(
        reply.attempts.all(), send=A.Kind.SEND, resolve=A.Kind.RESOLVE
    )


def _look_up(
    job: Job,
    reply: Reply,
    reader: CommentReader,
    ctx: PublishContext,
    last_try: bool,
    settle_at: datetime,
) -> bool:
    """After a send without an answer: True when that settled the reply (found, or left
    to a person), False when nothing exists and sending is safe (``unanswered``)."""
    attempt = _attempt(job, reply, A.Kind.LOOKUP)
    comment = reply.comment
    post = published_post(comment.rendition)
    try:
        found = reader.find_reply(
            ctx, post, comment.platform_id, reply.text, key=reply.idempotency_key
        )
    except ProviderError as err:
        if not unanswered.lookup_failed(job, attempt, err, last_try=last_try):
            raise
        _to_person(reply)
        return True
    if found is not None:
        attempt.close(A.Outcome.FOUND, provider_reply_id=found.provider_post_id)
        _sent(reply, found)
        return True
    strong = reader.reply_lookup_is_strong
    if unanswered.not_found(
        job, attempt, WRITE, settle_at=settle_at, strong=strong, last_try=last_try
    ):
        return False
    _to_person(reply)
    return True


def _to_person(reply: Reply) -> None:
    _settle(
        reply,
        Reply.Status.UNKNOWN,
        ProviderError(
            ErrorKind.OUTCOME_UNKNOWN,
            "The reply was sent without an answer and the platform does not list it; check "
            "the thread, then mark the reply sent or send it again.",
            code="reply_outcome_unknown",
            action=Action.VERIFY,
        ),
    )


def _send(job: Job, reply: Reply, reader: CommentReader, ctx: PublishContext) -> None:
    attempt = _attempt(job, reply, A.Kind.SEND)
    comment = reply.comment
    post = published_post(comment.rendition)
    try:
        result = reader.reply(ctx, post, comment.platform_id, reply.text, key=reply.idempotency_key)
    except ProviderError as err:
        unanswered.refused_in_progress(job, attempt, WRITE, err)
        unknown = err.kind == ErrorKind.OUTCOME_UNKNOWN
        attempt.close(A.Outcome.UNKNOWN if unknown else A.Outcome.FAILED, error=err.as_dict())
        raise
    except INTERRUPTIONS:
        raise  # the attempt stays in flight: the next run looks the reply up first
    except Exception as exc:
        # Our bug, or a raw error from the client: the reply may exist.
        attempt.close(A.Outcome.UNKNOWN, error={"kind": "unknown", "message": repr(exc)})
        raise
    with transaction.atomic():
        attempt.close(A.Outcome.SENT, provider_reply_id=result.provider_post_id)
        _sent(reply, result)


def _attempt(job: Job, reply: Reply, kind: str) -> ReplyAttempt:
    """The attempt row, committed before the request leaves (no transaction is open); it
    starts on the database clock, which the settle window of an unanswered send uses."""
    return ReplyAttempt.objects.create(
        workspace_id=reply.workspace_id,
        reply=reply,
        kind=kind,
        job_id=job.pk,
        started_at=db_now(),
    )


def _sent(reply: Reply, result: PublishedSegment) -> None:
    """The reply exists: recorded, its comment answered, and our reply kept as a comment
    of the thread (the next read then knows it as ours)."""
    with transaction.atomic():
        sent_at = result.published_at or timezone.now()
        if not reply.move(
            {Reply.Status.PENDING, Reply.Status.UNKNOWN},
            Reply.Status.SENT,
            provider_reply_id=result.provider_post_id,
            provider_url=result.provider_url,
            sent_at=sent_at,
            last_error=None,
        ):
            return
        comment = reply.comment
        Comment.objects.filter(pk=comment.pk).update(is_answered=True, updated_at=timezone.now())
        Comment.objects.get_or_create(
            rendition_id=comment.rendition_id,
            platform_id=result.provider_post_id,
            defaults=_our_comment(reply, result, sent_at),
        )
        events.emit(events.COMMENT_REPLIED, reply=reply)
    logger.info("inbox reply sent", extra={"reply_id": reply.pk, "comment_id": comment.pk})


def _our_comment(reply: Reply, result: PublishedSegment, sent_at: datetime) -> dict:
    comment = reply.comment
    account = comment.rendition.social_account
    return {
        "workspace_id": reply.workspace_id,
        "social_account_id": comment.social_account_id,
        "platform": comment.platform,
        "parent": comment,
        "parent_platform_id": comment.platform_id,
        "author_handle": account.handle,
        "author_name": account.display_name,
        "author_id": account.remote_id,
        "text": reply.text,
        "commented_at": sent_at,
        "url": result.provider_url,
        "is_ours": True,
        "state": Comment.State.DONE,
    }


def _settle(reply: Reply, status: str, err: ProviderError) -> None:
    reply.move({Reply.Status.PENDING}, status, last_error=err.as_dict())
    logger.warning("inbox reply %s: %s", status, err.message, extra={"reply_id": reply.pk})


# Services ----------------------------------------------------------------------------


def reply_create(
    *, comment: Comment, author: User | None, text: str, needs_approval: bool
) -> Reply:
    """A reply to the comment, sent by its job at once, or once an admin approves it."""
    text = text.strip()
    if not text:
        raise ValidationFailed("A reply needs text.", details={"text": ["Write a reply."]})
    with transaction.atomic():
        reply = Reply.objects.create(
            workspace_id=comment.workspace_id,
            comment=comment,
            author=author,
            text=text,
            status=Reply.Status.AWAITING_APPROVAL if needs_approval else Reply.Status.PENDING,
        )
        if not needs_approval:
            enqueue_reply(reply)
    return reply


def reply_review(*, reply: Reply, reviewer: User | None, approve: bool) -> Reply:
    """An admin approves a reply awaiting approval (it is sent), or rejects it."""
    with transaction.atomic():
        locked = Reply.objects.select_for_update().select_related("comment").get(pk=reply.pk)
        if locked.status != Reply.Status.AWAITING_APPROVAL:
            raise Conflict(
                f"The reply is {locked.status}; only one awaiting approval can be reviewed.",
                code="REPLY_NOT_AWAITING_APPROVAL",
                details={"status": locked.status},
            )
        status = Reply.Status.PENDING if approve else Reply.Status.REJECTED
        locked.move({Reply.Status.AWAITING_APPROVAL}, status, approved_by=reviewer)
        if approve:
            enqueue_reply(locked)
    return locked


def reply_retry(*, reply: Reply) -> Reply:
    """A person sends a failed or unknown reply again. For an unknown one they checked the
    thread and found none: that is recorded (a resolution), so the job sends it without
    looking again."""
    with transaction.atomic():
        locked = Reply.objects.select_for_update().select_related("comment").get(pk=reply.pk)
        if locked.status not in (Reply.Status.FAILED, Reply.Status.UNKNOWN):
            raise Conflict(
                f"The reply is {locked.status}; only a failed reply, or one whose outcome is "
                "unknown, can be sent again.",
                code="REPLY_NOT_RETRYABLE",
                details={"status": locked.status},
            )
        if locked.status == Reply.Status.UNKNOWN:
            ReplyAttempt.objects.create(
                workspace_id=locked.workspace_id,
                reply=locked,
                kind=A.Kind.RESOLVE,
                outcome=A.Outcome.ABSENT,
                note="A person found no reply.",
                finished_at=timezone.now(),
            )
        locked.move({locked.status}, Reply.Status.PENDING, last_error=None)
        enqueue_reply(locked)
    return locked


# The reply id recorded when a person, not the platform, confirmed the reply exists.
PERSON_FOUND_IT = "confirmed-by-person"


def reply_mark_sent(*, reply: Reply, url: str = "") -> Reply:
    """A person found on the platform the reply whose answer never came: it is recorded as
    sent (a resolution attempt), and its comment as answered; nothing is sent."""
    with transaction.atomic():
        locked = Reply.objects.select_for_update().select_related("comment").get(pk=reply.pk)
        if locked.status != Reply.Status.UNKNOWN:
            raise Conflict(
                f"The reply is {locked.status}; only one whose outcome is unknown can be "
                "marked sent.",
                code="REPLY_NOT_UNKNOWN",
                details={"status": locked.status},
            )
        ReplyAttempt.objects.create(
            workspace_id=locked.workspace_id,
            reply=locked,
            kind=A.Kind.RESOLVE,
            outcome=A.Outcome.FOUND,
            note="A person found the reply.",
            finished_at=timezone.now(),
        )
        locked.move(
            {Reply.Status.UNKNOWN},
            Reply.Status.SENT,
            provider_reply_id=PERSON_FOUND_IT,
            provider_url=url[:1000],
            sent_at=timezone.now(),
            last_error=None,
        )
        Comment.objects.filter(pk=locked.comment_id).update(is_answered=True)
        events.emit(events.COMMENT_REPLIED, reply=locked)
    return locked


def replies_of(comment: Comment) -> QuerySet[Reply]:
    return comment.replies.order_by("pk")

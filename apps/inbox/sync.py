"""Reading the comments under our published posts: a read, safe to repeat.

Every published rendition gets a ``CommentSync`` row when it is published (those published
in the 90 days before the inbox existed got theirs from its migration). The sweep enqueues
one read job per due row, in its platform's lane, holding no publish seat, and moves the
row's next read by the post's age (often in its first day, rarely after a month, never
after ``READ_FOR_DAYS``), so a read that keeps failing cannot make the sweep spin. A read
that meets a rate limit is retried by its job after the platform's Retry-After. New
comments by others emit ``comment.received``; the account's own (its first comment,
replies made anywhere) are marked ours. Where a read is complete (every comment the post
has), a comment we hold that it lacks is marked gone (deleted on the platform), not dropped.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.common import events
from apps.jobs.errors import RetryableError
from apps.jobs.models import Job
from apps.jobs.services import job_enqueue
from apps.providers.comment_reading import RemoteComment, comment_reader, read_is_complete
from apps.providers.errors import RETRYABLE_KINDS, ErrorKind, ProviderError
from apps.renditions.models import FirstComment, Rendition

from .connect import connect, published_post
from .models import Comment, CommentSync, Reply

logger = logging.getLogger(__name__)

SYNC_JOB = "inbox.sync"
READ_FOR_DAYS = 90
# (age of the post below which, time between reads)
CADENCE: tuple[tuple[timedelta, timedelta], ...] = (
    (timedelta(days=1), timedelta(minutes=10)),
    (timedelta(days=7), timedelta(hours=1)),
    (timedelta(days=30), timedelta(hours=6)),
    (timedelta(days=READ_FOR_DAYS), timedelta(days=1)),
)
SWEEP_BATCH = 500
# A comment we stored ourselves (a reply just sent) may not be listed yet: a complete read
# that lacks it says it is gone only once it is older than this.
GONE_GRACE = timedelta(minutes=30)
# Kinds that say the account cannot read this post's comments: not retried, shown.
UNAVAILABLE_KINDS = frozenset({ErrorKind.PERMISSION_MISSING, ErrorKind.PLAN_RESTRICTED})


def next_read_at(published_at: datetime, now: datetime) -> datetime | None:
    """When the post's comments are read next, by its age; None once it is too old."""
    age = now - published_at
    for below, every in CADENCE:
        if age < below:
            return now + every
    return None


def sync_dedupe_key(rendition_id: int) -> str:
    return f"inbox-sync:{rendition_id}"


def sync_start(rendition: Rendition) -> CommentSync:
    """The rendition's read schedule, first read due now (called when it is published)."""
    sync, _ = CommentSync.objects.get_or_create(
        rendition=rendition,
        defaults={
            "workspace_id": rendition.workspace_id,
            "platform": rendition.platform,
            "next_read_at": timezone.now(),
        },
    )
    return sync


def sync_resume(account: SocialAccount) -> int:
    """A reconnected account may read what it could not (new scopes, a new token): its
    posts' reads that were given up as unavailable are due again. Returns how many."""
    return (
        CommentSync.objects.filter(rendition__social_account_id=getattr(account, "pk", None))
        .exclude(unavailable="")
        .update(unavailable="", next_read_at=timezone.now(), updated_at=timezone.now())
    )


def sync_due() -> int:
    """The sweep: a read job for each due schedule, its next read moved on first (so a read
    that keeps failing cannot make the sweep spin). Returns how many jobs were enqueued."""
    now = timezone.now()
    enqueued = 0
    with transaction.atomic():
        due = (
            CommentSync.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(next_read_at__lte=now)
            .select_related("rendition", "workspace")
            .order_by("next_read_at")[:SWEEP_BATCH]
        )
        for sync in due:
            published_at = sync.rendition.published_at or now
            sync.next_read_at = next_read_at(published_at, now)
            sync.save(update_fields=["next_read_at", "updated_at"])
            enqueue_sync(sync)
            enqueued += 1
    return enqueued


def enqueue_sync(sync: CommentSync) -> Job:
    return job_enqueue(
        type=SYNC_JOB,
        payload={"sync_id": sync.pk},
        organization=None,
        workspace=sync.workspace,
        dedupe_key=sync_dedupe_key(sync.rendition_id),
        lane=sync.platform,
    )


def read_comments(job: Job) -> None:
    """Handler of ``inbox.sync``: one read of one post's comments."""
    sync = (
        CommentSync.objects.select_related("rendition__social_account")
        .filter(pk=job.payload["sync_id"])
        .first()
    )
    if sync is None:
        return
    rendition = sync.rendition
    if rendition.status != Rendition.Status.PUBLISHED or not rendition.provider_post_id:
        CommentSync.objects.filter(pk=sync.pk).update(next_read_at=None)
        return
    offer = comment_reader(rendition.platform).offer
    if not offer.read:
        _unavailable(sync, offer.note)  # said before any credentials are touched
        return
    try:
        reader, ctx = connect(rendition)
        remote = reader.read_comments(ctx, published_post(rendition), sync.last_comment_at)
    except ProviderError as err:
        if err.kind in RETRYABLE_KINDS:
            if err.kind == ErrorKind.RATE_LIMITED:
                _hold_account(rendition, err.retry_at)
            # The job's retry waits at least the platform's Retry-After.
            raise RetryableError(err.kind, err.message, retry_at=err.retry_at) from err
        if err.kind in UNAVAILABLE_KINDS:
            _unavailable(sync, err.message)
        CommentSync.objects.filter(pk=sync.pk).update(last_error=err.as_dict())
        return
    store_comments(sync, remote)


def _hold_account(rendition: Rendition, retry_at: datetime | None) -> None:
    """A rate limit is the account's: its other posts' reads wait as long (those already
    due are moved past the platform's Retry-After, or a minute when it named none)."""
    until = retry_at or timezone.now() + timedelta(minutes=1)
    CommentSync.objects.filter(
        rendition__social_account_id=rendition.social_account_id, next_read_at__lt=until
    ).update(next_read_at=until)


def _unavailable(sync: CommentSync, why: str) -> None:
    CommentSync.objects.filter(pk=sync.pk).update(
        unavailable=why[:255], next_read_at=None, updated_at=timezone.now()
    )


def store_comments(sync: CommentSync, remote: list[RemoteComment]) -> list[Comment]:
    """Save what one read saw; returns the comments new to us. Emits ``comment.received``
    for each new one that is not ours."""
    rendition = sync.rendition
    with transaction.atomic():
        known = {c.platform_id: c for c in Comment.objects.filter(rendition=rendition)}
        ours = _our_ids(rendition)
        new: list[Comment] = []
        for item in remote:
            comment = known.get(item.platform_id)
            if comment is None:
                comment = _new_comment(rendition, item, ours)
                known[item.platform_id] = comment
                new.append(comment)
            elif (
                comment.text != item.text
                or comment.is_hidden != item.is_hidden
                or comment.gone_at is not None  # listed again: it was only lagging
                or (item.url and not comment.url)  # our reply, sent without its link
            ):
                comment.text, comment.is_hidden = item.text, item.is_hidden
                comment.gone_at = None
                comment.url = comment.url or item.url[:1000]
                comment.save(update_fields=["text", "is_hidden", "gone_at", "url", "updated_at"])
        Comment.objects.bulk_create(new)
        if read_is_complete(remote):
            _mark_gone(rendition, seen={item.platform_id for item in remote})
        _link_threads(known)
        newest = max((c.created_at for c in remote), default=sync.last_comment_at)
        CommentSync.objects.filter(pk=sync.pk).update(
            last_read_at=timezone.now(),
            last_comment_at=newest,
            reads=sync.reads + 1,
            last_error=None,
            unavailable="",
        )
        for comment in new:
            if not comment.is_ours:
                events.emit(events.COMMENT_RECEIVED, comment=comment)
    return new


def _mark_gone(rendition: Rendition, seen: set[str]) -> int:
    """After a complete read: the comments we hold that it no longer lists were deleted on
    the platform (by their authors, or removed). They stay, marked, never dropped."""
    now = timezone.now()
    return (
        Comment.objects.filter(
            rendition=rendition,
            gone_at__isnull=True,
            is_deleted=False,
            created_at__lt=now - GONE_GRACE,
        )
        .exclude(platform_id__in=seen)
        .update(gone_at=now, updated_at=now)
    )


def _our_ids(rendition: Rendition) -> set[str]:
    """Ids the account is known to have made under the post: its first comment, replies
    sent from the inbox."""
    ids = set(
        Reply.objects.filter(comment__rendition=rendition)
        .exclude(provider_reply_id="")
        .values_list("provider_reply_id", flat=True)
    )
    first = FirstComment.objects.filter(rendition=rendition).values_list(
        "provider_comment_id", flat=True
    )
    ids.update(i for i in first if i)
    return ids


def _new_comment(rendition: Rendition, item: RemoteComment, ours: set[str]) -> Comment:
    account = rendition.social_account
    # Some platforms keep the account's own id beside a composite remote id (Mastodon).
    own_ids = {account.remote_id, str(account.settings.get("account_id") or "")} - {""}
    by_account = item.author_id in own_ids
    by_handle = item.author_handle.lstrip("@").casefold() == account.handle.lstrip("@").casefold()
    parent = item.parent_id if item.parent_id != rendition.provider_post_id else None
    is_ours = item.platform_id in ours or by_account or by_handle
    return Comment(
        workspace_id=rendition.workspace_id,
        rendition=rendition,
        social_account_id=rendition.social_account_id,
        platform=rendition.platform,
        platform_id=item.platform_id,
        parent_platform_id=parent or "",
        author_name=item.author_name[:255],
        author_handle=item.author_handle[:255],
        author_id=item.author_id[:255],
        text=item.text,
        commented_at=item.created_at,
        url=item.url[:1000],
        is_ours=is_ours,
        is_hidden=item.is_hidden,
        # Our own words need no answer.
        state=Comment.State.DONE if is_ours else Comment.State.OPEN,
    )


def _link_threads(known: dict[str, Comment]) -> None:
    """Each comment's parent row where it was read after its child (or with it), and the
    comments our new replies answer."""
    for comment in known.values():
        if comment.parent_id is not None or not comment.parent_platform_id:
            continue
        parent = known.get(comment.parent_platform_id)
        if parent is None or parent.pk is None:
            continue
        comment.parent = parent
        Comment.objects.filter(pk=comment.pk).update(parent=parent)
        if comment.is_ours and not parent.is_answered:
            parent.is_answered = True
            Comment.objects.filter(pk=parent.pk).update(is_answered=True)

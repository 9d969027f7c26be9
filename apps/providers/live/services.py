"""Live validation: post a marked test post with an operator's connected account, find it
again, exercise the platform's idempotency handle, post and find a first comment, delete what
was made, and record the outcome (docs/operations.md, "Validating against the live platform").

Every step goes through the platform's real adapter, exactly as publishing uses it. A step
the platform (or our adapter) does not offer is reported `not_offered`, never failed; a step
that needs a failed one is `skipped`. Whatever the run made is deleted at the end where the
platform lets the adapter delete, else listed in `leftovers` for the operator.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings as django_settings
from django.utils import timezone

from apps.accounts import services as account_services
from apps.accounts.models import SocialAccount
from apps.common.errors import ValidationFailed
from apps.providers import httpcall
from apps.providers.base import (
    Adapter,
    MediaPayload,
    PublishContext,
    PublishedSegment,
    SegmentPayload,
    SupportsDelete,
    SupportsFirstComment,
    SupportsLookup,
    SupportsStatusPoll,
    get_adapter,
)
from apps.providers.catalog import PlatformCapabilities, get_capabilities
from apps.providers.errors import ProviderError
from apps.providers.facebook.adapter import FacebookPagesAdapter
from apps.providers.live.models import PlatformValidation
from apps.providers.meta.graph import GRAPH_VERSION

logger = logging.getLogger(__name__)

Status = PlatformValidation.StepStatus
# Listings may lag behind a post just made: a lookup is tried this often, this far apart.
FIND_TRIES = 6
FIND_PAUSE_S = 10.0
# How long an asynchronous platform may take to publish the test post.
PUBLISH_WAIT_S = 600.0
# The API each adapter speaks, where the account does not say (Mastodon's server version
# is read at connect).
API_VERSIONS = {
    "bluesky": "AT Protocol (app.bsky)",
    "facebook": f"Graph API {GRAPH_VERSION}",
    "instagram": f"Graph API {GRAPH_VERSION}",
    "pinterest": "API v5",
    "reddit": "OAuth API",
    "threads": "Threads API v1.0",
    "tiktok": "Content Posting API v2",
    "x": "API v2",
    "youtube": "Data API v3",
    "sandbox": "sandbox v1",
}


@dataclass
class StepResult:
    name: str
    status: str
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status in (Status.PASSED, Status.NOT_OFFERED)

    def as_dict(self) -> dict:
        return {"name": self.name, "status": str(self.status), "detail": self.detail}


@dataclass
class _Run:
    adapter: Adapter
    caps: PlatformCapabilities
    ctx: PublishContext
    segment: SegmentPayload
    marker: str
    started_at: datetime
    post: PublishedSegment | None = None
    # What the run made on the platform, in order: (what, the segment).
    made: list[tuple[str, PublishedSegment]] = field(default_factory=list)


def platform_api_version(account: SocialAccount) -> str:
    """The API version the adapter speaks to this account's platform."""
    if account.platform == "mastodon":
        version = account.settings.get("server_version") or "unknown"
        return f"Mastodon {version}"
    if account.platform == "linkedin":
        return f"LinkedIn-Version {django_settings.LINKEDIN_API_VERSION}"
    return API_VERSIONS.get(account.platform, "")


def platform_validation_run(
    *,
    account: SocialAccount,
    operator: str = "",
    api_version: str | None = None,
    media: Sequence[MediaPayload] = (),
    settings: dict | None = None,
    on_step: Callable[[StepResult], None] | None = None,
) -> PlatformValidation:
    """Run every step against the account's live platform and record the validation.

    Refuses (ValidationFailed, ACCOUNT_NOT_CONNECTED) an account that is not connected.
    `media` is attached to the test post (needed where the platform requires media),
    `settings` are the per-post settings the platform requires (a subreddit, a board).
    `on_step` sees each step's result as soon as it is known. Provider calls are made
    outside any transaction; the record is written once, at the end.
    """
    if account.status != SocialAccount.Status.CONNECTED:
        raise ValidationFailed(
            f"The account {account} is {account.status}, not connected; reconnect it first.",
            code="ACCOUNT_NOT_CONNECTED",
            details={"account": account.pk, "status": account.status},
        )
    adapter = get_adapter(account.platform)
    caps = get_capabilities(account.platform)
    started_at = timezone.now()
    marker = uuid.uuid4().hex[:10]
    run = _Run(
        adapter=adapter,
        caps=caps,
        ctx=_context(account, marker, settings or {}),
        segment=SegmentPayload(
            0, f"Test post (platform check {marker}); it is deleted in a moment.", list(media)
        ),
        marker=marker,
        started_at=started_at,
    )
    results = _run_steps(run, on_step)
    leftovers = [
        {"what": what, "id": made.provider_post_id, "url": made.provider_url}
        for what, made in run.made
    ]
    validation = PlatformValidation(
        platform=account.platform,
        api_version=api_version or platform_api_version(account),
        account=account,
        account_handle=account.handle,
        operator=operator,
        started_at=started_at,
        finished_at=timezone.now(),
        steps=[r.as_dict() for r in results],
        passed=all(r.ok for r in results),
        leftovers=leftovers,
    )
    validation.full_clean()
    validation.save()
    return validation


def _run_steps(run: _Run, on_step: Callable[[StepResult], None] | None) -> list[StepResult]:
    """Every step in order (a platform's own checks before the clean-up); a step that needs
    the test post is skipped without it."""
    steps: list[tuple[str, Callable[[_Run], StepResult]]] = [
        ("publish", _publish),
        ("lookup", _lookup),
        ("idempotency", _idempotency),
        ("first_comment", _first_comment),
        *PLATFORM_STEPS.get(run.caps.platform, ()),
        ("delete", _delete),
    ]
    results: list[StepResult] = []
    for name, step in steps:
        if name != "delete" and name != "publish" and run.post is None:
            result = StepResult(name, Status.SKIPPED, "the test post was not published")
        else:
            try:
                result = step(run)
            except ProviderError as err:
                result = StepResult(name, Status.FAILED, _describe(err))
            except Exception as exc:  # noqa: BLE001 - the clean-up and the record still run
                # Our bug, not the platform's answer: keep the traceback for the operator.
                logger.exception("Live validation step %s errored", name)
                result = StepResult(name, Status.FAILED, f"error: {type(exc).__name__}: {exc}")
        results.append(result)
        if on_step is not None:
            on_step(result)
    return results


def _context(account: SocialAccount, marker: str, settings: dict) -> PublishContext:
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings=settings,
        rendition_id=0,
        idempotency_base=f"validation-{marker}",
        credentials_saver=lambda refreshed: _store_credentials(account, refreshed),
    )


def _store_credentials(account: SocialAccount, fresh: dict) -> None:
    """Refreshed credentials are stored at once: the platform may have spent the old
    refresh token."""
    expires_at = fresh.get("expires_at")
    if expires_at:
        account.token_expires_at = datetime.fromisoformat(expires_at)
    account_services.social_account_store_credentials(
        account=account, credentials=fresh, save=False
    )
    account.save(
        update_fields=[
            "token_expires_at",
            "credentials_key_id",
            "credentials_ciphertext",
            "updated_at",
        ]
    )


# The steps. Each returns its result or raises ProviderError (a failed step).


def _publish(run: _Run) -> StepResult:
    missing = [s.name for s in run.caps.settings if s.required and s.name not in run.ctx.settings]
    if missing:
        return StepResult(
            "publish", Status.FAILED, f"needs --setting for: {', '.join(sorted(missing))}"
        )
    if run.caps.requires_media and not run.segment.media:
        return StepResult("publish", Status.FAILED, "this platform needs media: pass --media")
    # As the pipeline does before publishing: a token near expiry is refreshed first.
    fresh = run.adapter.refresh_credentials(run.ctx.account, run.ctx.credentials)
    if fresh is not None:
        run.ctx.persist_credentials(fresh)
    published = run.adapter.publish_segment(run.ctx, run.segment, reply_to=None)
    run.made.append(("post", published))
    if published.pending:
        published = _wait_published(run, published)
        run.made[-1] = ("post", published)
        if published.pending:
            return StepResult(
                "publish",
                Status.FAILED,
                f"accepted as {published.provider_post_id} but still processing after "
                f"{PUBLISH_WAIT_S:.0f} s",
            )
    run.post = published
    return StepResult("publish", Status.PASSED, _where(published))


def _wait_published(run: _Run, pending: PublishedSegment) -> PublishedSegment:
    if not isinstance(run.adapter, SupportsStatusPoll):
        return pending
    schedule = run.adapter.poll_schedule  # type: ignore[attr-defined]
    polls, elapsed = 0, 0.0
    while pending.pending:
        delay = schedule.next_delay(polls_done=polls, elapsed_s=elapsed)
        if delay is None or elapsed >= PUBLISH_WAIT_S:
            break
        httpcall.sleep(delay)
        elapsed += delay
        polls += 1
        pending = run.adapter.poll_segment(run.ctx, pending)
    return pending


def _lookup(run: _Run) -> StepResult:
    adapter = run.adapter
    if not isinstance(adapter, SupportsLookup):
        return StepResult("lookup", Status.NOT_OFFERED, "the platform offers no lookup")
    assert run.post is not None
    not_before = run.started_at - timedelta(minutes=1)
    found = _find(lambda: adapter.lookup_segment(run.ctx, run.segment, not_before=not_before))
    if found is None:
        return StepResult("lookup", Status.FAILED, f"not found after {FIND_TRIES} tries")
    if found.provider_post_id != run.post.provider_post_id:
        return StepResult(
            "lookup",
            Status.FAILED,
            f"found {found.provider_post_id}, not the test post {run.post.provider_post_id}",
        )
    return StepResult("lookup", Status.PASSED, f"found {found.provider_post_id} by its text")


def _idempotency(run: _Run) -> StepResult:
    """A resend of the test post: under the same handle where the platform honours one,
    else where it refuses a duplicate naming the post. Either way no second post."""
    assert run.post is not None
    if run.adapter.is_retry_safe(run.ctx.account):
        again = run.adapter.publish_segment(run.ctx, run.segment, reply_to=None)
        if again.provider_post_id == run.post.provider_post_id:
            return StepResult(
                "idempotency",
                Status.PASSED,
                f"a resend under the same handle returned {again.provider_post_id}",
            )
        run.made.append(("duplicate post", again))
        return StepResult(
            "idempotency",
            Status.FAILED,
            f"a resend under the same handle made a second post {again.provider_post_id}",
        )
    if run.adapter.duplicate_refusal_covers(run.segment):
        try:
            again = run.adapter.publish_segment(run.ctx, run.segment, reply_to=None)
        except ProviderError as err:
            if err.existing_post_id == run.post.provider_post_id:
                return StepResult(
                    "idempotency",
                    Status.PASSED,
                    f"a resend was refused as a duplicate of {err.existing_post_id}",
                )
            return StepResult(
                "idempotency",
                Status.FAILED,
                f"a resend was refused without naming the test post: {_describe(err)}",
            )
        run.made.append(("duplicate post", again))
        return StepResult(
            "idempotency",
            Status.FAILED,
            f"a resend was accepted as a second post {again.provider_post_id}",
        )
    return StepResult(
        "idempotency",
        Status.NOT_OFFERED,
        "no idempotency handle: an unknown outcome is settled by lookup or by a person",
    )


def _first_comment(run: _Run) -> StepResult:
    adapter = run.adapter
    if not (run.caps.supports_first_comment and isinstance(adapter, SupportsFirstComment)):
        return StepResult("first_comment", Status.NOT_OFFERED, "no first comments here")
    assert run.post is not None
    text = f"Test comment (platform check {run.marker})."
    key = f"{run.ctx.idempotency_base}-comment"
    post = run.post
    comment = adapter.publish_comment(run.ctx, post, text, key=key)
    run.made.append(("comment", comment))
    found = _find(lambda: adapter.find_comment(run.ctx, post, text, key=key))
    if found is None:
        return StepResult(
            "first_comment",
            Status.FAILED,
            f"posted {comment.provider_post_id} but not found after {FIND_TRIES} tries",
        )
    if found.provider_post_id != comment.provider_post_id:
        return StepResult(
            "first_comment",
            Status.FAILED,
            f"found {found.provider_post_id}, not the comment {comment.provider_post_id}",
        )
    return StepResult("first_comment", Status.PASSED, f"posted and found {_where(comment)}")


def _delete(run: _Run) -> StepResult:
    """Delete what the run made, newest first. A comment made as a reply is a post of its
    own; a comment under the post goes with the post."""
    if not run.made:
        return StepResult("delete", Status.SKIPPED, "nothing was made")
    if not isinstance(run.adapter, SupportsDelete):
        why = run.adapter.delete_unsupported or "the adapter cannot delete here"
        return StepResult(
            "delete",
            Status.NOT_OFFERED,
            f"{why}: delete by hand "
            + ", ".join(m.provider_url or m.provider_post_id for _, m in run.made),
        )
    deleted, failures = [], []
    for what, made in reversed(list(run.made)):
        if what == "comment" and run.caps.first_comment_mode != "reply":
            continue  # deleted with its post
        try:
            run.adapter.delete_post(run.ctx, made)
        except ProviderError as err:
            failures.append(f"{what} {made.provider_post_id}: {_describe(err)}")
            continue
        run.made.remove((what, made))
        deleted.append(f"{what} {made.provider_post_id}")
    if run.post is not None and ("post", run.post) not in run.made:
        run.made = [(w, m) for w, m in run.made if w != "comment"]
    if failures:
        return StepResult("delete", Status.FAILED, "; ".join(failures))
    return StepResult("delete", Status.PASSED, "deleted " + ", ".join(deleted))


def _facebook_video(run: _Run) -> StepResult:
    """Which video upload works today (docs/platforms/facebook.md, "Video upload
    protocol"): the test post's video went up by the protocol the account's setting chose
    (by default the Resumable Upload API, upload_phase when Meta refuses the session);
    then a Resumable Upload API session is opened with the same token (nothing is uploaded
    into it), to learn whether that path, the one Meta's guide shows, is open to it."""
    videos = [m for m in run.segment.media if m.kind == "video"]
    if not videos or videos[0].public_url:
        return StepResult(
            "video_upload",
            Status.NOT_OFFERED,
            "pass --media with a video, without --media-url, to check Facebook's video upload",
        )
    assert run.post is not None and isinstance(run.adapter, FacebookPagesAdapter)
    entry = run.ctx.checkpoint.get("videos", {}).get(str(run.segment.position)) or {}
    if entry.get("protocol") == "resumable":
        done = (
            "the video went up by the Resumable Upload API and was published by its file "
            f"handle (video {run.post.provider_post_id})"
        )
    else:
        done = f"a Page token finished an upload_phase upload (video {run.post.provider_post_id})"
    try:
        session = run.adapter.open_upload_session(run.ctx, videos[0])
    except ProviderError as err:
        resumable = f"it may not open a Resumable Upload API session: {_describe(err)}"
    else:
        resumable = f"it may open a Resumable Upload API session ({session})"
    return StepResult("video_upload", Status.PASSED, f"{done}; {resumable}")


# Checks of one platform's own, run after the first comment and before the clean-up.
PLATFORM_STEPS: dict[str, tuple[tuple[str, Callable[[_Run], StepResult]], ...]] = {
    "facebook": (("video_upload", _facebook_video),),
}


def _find(look: Callable[[], PublishedSegment | None]) -> PublishedSegment | None:
    """`look()` until it finds something, FIND_TRIES times, FIND_PAUSE_S apart."""
    for attempt in range(FIND_TRIES):
        if attempt:
            httpcall.sleep(FIND_PAUSE_S)
        found = look()
        if found is not None:
            return found
    return None


def _where(segment: PublishedSegment) -> str:
    return f"{segment.provider_post_id} {segment.provider_url}".strip()


def _describe(err: ProviderError) -> str:
    status = f" HTTP {err.http_status}" if err.http_status else ""
    return f"{err.kind}/{err.code or '-'}{status}: {err.message}"

"""The metrics sync: what one `analytics.sync` job does for one workspace and platform.

Read-only and safe to repeat: each read adds a sample row, so a job run twice adds a
second sample, never a wrong one. The job holds no publish seat (its type's seat is None,
its lane the platform). A 429 or an unavailable platform ends the run with a retryable
error carrying the platform's Retry-After, so the queue backs it off like any job; the
samples already read stay. A problem of one post or account (a deleted post, a missing
permission) is kept on its schedule and does not stop the others.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models.functions import Now

from apps.accounts.crypto import CredentialsError
from apps.accounts.models import SocialAccount
from apps.analytics import services
from apps.analytics.cadence import STOP_AFTER
from apps.analytics.models import FollowersSchedule, MetricsSchedule
from apps.common.db_clock import db_now
from apps.jobs.errors import INTERRUPTIONS, RetryableError, Snooze
from apps.providers.base import PublishContext, PublishedSegment, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.metrics import (
    PERMISSION,
    MetricsReader,
    PostMetrics,
    get_reader,
    readers,
)
from apps.publishing.delivery.context import (
    fresh_credentials,
    publish_context,
    store_refreshed_credentials,
)
from apps.publishing.locks import RefreshInProgress

logger = logging.getLogger(__name__)

# Due reads one run takes on; the rest wait for the next sweep (minutes away).
BATCH = 100
# The next try of a post or account whose read failed for a reason of its own.
RETRY_LATER = timedelta(days=1)
# Kinds that end the run and back the job off (the platform, not the post, is the problem).
BACK_OFF_KINDS = frozenset(
    {ErrorKind.RATE_LIMITED, ErrorKind.PROVIDER_UNAVAILABLE, ErrorKind.NETWORK_BEFORE_SEND}
)


def enabled_platforms() -> frozenset[str]:
    """The platforms whose reads the operator switched on (ANALYTICS_PLATFORMS) and that
    have a reader (a platform without one is never swept, so never a job for nothing)."""
    return frozenset(settings.ANALYTICS_PLATFORMS) & frozenset(readers())


def sync_workspace_platform(*, workspace_id: int, platform: str) -> int:
    """Read the workspace's due posts and accounts on `platform`; returns the reads done.
    Raises RetryableError to back off (429, platform down) and Snooze when the
    platform's daily read budget is spent (until the next UTC day)."""
    reader = get_reader(platform)
    if reader is None or platform not in enabled_platforms():
        return 0
    credentials: dict[int, dict | ProviderError] = {}
    reads = 0
    due_posts = (
        MetricsSchedule.objects.filter(
            workspace_id=workspace_id, platform=platform, next_sync_at__lte=Now()
        )
        .select_related("rendition__social_account")
        .order_by("next_sync_at")[:BATCH]
    )
    for schedule in due_posts:
        _spend(reader)
        reads += _read_post(reader, schedule, credentials)
    due_accounts = FollowersSchedule.objects.filter(
        workspace_id=workspace_id, platform=platform, next_sync_at__lte=Now()
    ).select_related("social_account")
    if not reader.offers.followers:
        due_accounts.update(next_sync_at=None)  # nothing to read, ever: not due again
        return reads
    for followers_schedule in due_accounts[:BATCH]:
        _spend(reader)
        reads += _read_followers(reader, followers_schedule, credentials)
    return reads


def _spend(reader: MetricsReader) -> None:
    if not services.read_budget_spend(platform=reader.platform, units=reader.offers.read_cost):
        now = db_now()
        tomorrow = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), now.tzinfo)
        raise Snooze(tomorrow, f"{reader.platform}'s daily read budget is spent")


def _credentials(account: SocialAccount, cache: dict[int, dict | ProviderError]) -> dict:
    """The account's credentials (refreshed when near expiry), once per run; an account
    that cannot be used raises its ProviderError for each of its reads."""
    if account.pk not in cache:
        try:
            if account.status != SocialAccount.Status.CONNECTED:
                raise ProviderError(
                    ErrorKind.AUTH_EXPIRED,
                    f"The account must be reconnected ({account.status}).",
                    code=f"account_{account.status}",
                )
            cache[account.pk] = fresh_credentials(get_adapter(account.platform), account.pk)
        except RefreshInProgress:
            raise RetryableError(
                ErrorKind.NETWORK_BEFORE_SEND, "Another worker is refreshing the token."
            ) from None
        except CredentialsError as exc:
            cache[account.pk] = ProviderError(ErrorKind.UNKNOWN, str(exc), code="credentials")
        except ProviderError as exc:
            if exc.kind in BACK_OFF_KINDS:
                raise _back_off(exc) from exc
            cache[account.pk] = exc
    found = cache[account.pk]
    if isinstance(found, ProviderError):
        raise found
    return found


def account_context(account: SocialAccount, credentials: dict) -> PublishContext:
    """A context for an account-level read (no rendition): refreshed credentials are
    stored at once, as the pipeline stores them."""
    return PublishContext(
        account=account,
        credentials=credentials,
        settings={},
        rendition_id=0,
        idempotency_base=f"account-{account.pk}",
        credentials_saver=lambda fresh: store_refreshed_credentials(account, fresh),
    )


def _back_off(exc: ProviderError) -> RetryableError:
    return RetryableError(exc.kind, exc.message, retry_at=exc.retry_at, details=exc.as_dict())


def _read_post(
    reader: MetricsReader, schedule: MetricsSchedule, cache: dict[int, dict | ProviderError]
) -> int:
    rendition = schedule.rendition
    try:
        credentials = _credentials(rendition.social_account, cache)
        metrics = reader.read_post_metrics(
            publish_context(rendition, credentials),
            PublishedSegment(
                provider_post_id=rendition.provider_post_id, provider_url=rendition.provider_url
            ),
        )
    except INTERRUPTIONS:
        raise
    except ProviderError as exc:
        if exc.kind in BACK_OFF_KINDS:
            raise _back_off(exc) from exc
        _post_failed(reader, schedule, exc)
        return 0
    except (RetryableError, Snooze):
        raise
    except Exception as exc:  # a reader's bug must not stall every other post
        logger.exception("Metrics read of rendition %s failed", schedule.rendition_id)
        services.schedule_failed(
            schedule=schedule,
            error={"kind": "errored", "message": str(exc)[:300]},
            retry_in=RETRY_LATER,
        )
        return 0
    services.post_sample_record(schedule=schedule, metrics=metrics, now=db_now())
    return 1


def _post_failed(reader: MetricsReader, schedule: MetricsSchedule, exc: ProviderError) -> None:
    """A post's own problem: gone (404) stops its reads; a missing permission is noted as
    the gap of every metric it hides; anything else is tried again a day later, up to the
    post's 90 days."""
    error = exc.as_dict()
    if exc.http_status in (404, 410):
        services.schedule_failed(schedule=schedule, error=error, retry_in=None)
        return
    if exc.kind in (ErrorKind.PERMISSION_MISSING, ErrorKind.PLAN_RESTRICTED):
        gaps = {name: PERMISSION for name in reader.offers.post}
        services.post_sample_record(
            schedule=schedule,
            metrics=PostMetrics(gaps={**reader.offers.missing(), **gaps}),
            now=db_now(),
        )
        return
    past_age = db_now() - schedule.published_at >= STOP_AFTER
    services.schedule_failed(
        schedule=schedule, error=error, retry_in=None if past_age else RETRY_LATER
    )


def _read_followers(
    reader: MetricsReader,
    schedule: FollowersSchedule,
    cache: dict[int, dict | ProviderError],
) -> int:
    account = schedule.social_account
    try:
        read = reader.read_followers(account_context(account, _credentials(account, cache)))
    except INTERRUPTIONS:
        raise
    except ProviderError as exc:
        if exc.kind in BACK_OFF_KINDS:
            raise _back_off(exc) from exc
        services.schedule_failed(schedule=schedule, error=exc.as_dict(), retry_in=RETRY_LATER)
        return 0
    except (RetryableError, Snooze):
        raise
    except Exception as exc:  # a reader's bug must not stall the other accounts
        logger.exception("Followers read of account %s failed", account.pk)
        services.schedule_failed(
            schedule=schedule,
            error={"kind": "errored", "message": str(exc)[:300]},
            retry_in=RETRY_LATER,
        )
        return 0
    services.followers_sample_record(schedule=schedule, read=read, now=db_now())
    return 1

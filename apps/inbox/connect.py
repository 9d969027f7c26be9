"""The reader of a rendition's platform and a context to call it with: the account's
fresh credentials, and no checkpoint (reading and replying never touch the post's)."""

from __future__ import annotations

from apps.accounts.models import SocialAccount
from apps.providers.base import PublishContext, PublishedSegment, get_adapter
from apps.providers.comment_reading import CommentReader, comment_reader
from apps.providers.errors import ErrorKind, ProviderError
from apps.publishing.delivery.context import credentials_for_call, store_refreshed_credentials
from apps.renditions.models import Rendition


def published_post(rendition: Rendition) -> PublishedSegment:
    return PublishedSegment(rendition.provider_post_id, rendition.provider_url)


def connect(rendition: Rendition) -> tuple[CommentReader, PublishContext]:
    """ProviderError when the account cannot be used now."""
    account = rendition.social_account
    if account.status != SocialAccount.Status.CONNECTED:
        raise ProviderError(
            ErrorKind.AUTH_EXPIRED,
            f"The {account.platform} account @{account.handle} must be reconnected.",
            code=f"account_{account.status}",
            retryable=False,
        )
    reader = comment_reader(rendition.platform)
    credentials = credentials_for_call(get_adapter(rendition.platform), account.pk)
    ctx = PublishContext(
        account=account,
        credentials=credentials,
        settings=rendition.settings or {},
        rendition_id=rendition.pk,
        idempotency_base=f"rendition-{rendition.pk}-inbox",
        credentials_saver=lambda fresh: store_refreshed_credentials(account, fresh),
    )
    return reader, ctx

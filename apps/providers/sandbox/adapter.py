"""The sandbox platform's adapter: a real HTTP client for the sandbox API."""

from datetime import datetime, timedelta

import httpx
from django.conf import settings
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers import httpcall
from apps.providers.base import (
    Adapter,
    Implements,
    PollSchedule,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import (
    Action,
    ErrorKind,
    ProviderError,
    classify_status,
    classify_transport,
)

REFRESH_MARGIN = timedelta(minutes=5)


class SandboxAdapter(Adapter):
    platform = "sandbox"
    implements = Implements(
        media_kinds=frozenset({"image", "video", "gif"}),
        max_images=4,  # GIFs share the image bucket
        max_videos=1,
        threads=True,  # reply_to
        alt_text=True,
    )
    lookup_is_strong = True  # posts are listed by their exact idempotency key
    comment_lookup_is_strong = True  # ...and so are comments
    # A processing post is asked about every couple of seconds, for at most an hour.
    poll_schedule = PollSchedule(initial_delay_s=1.0, interval_s=2.0, max_wait_s=3600.0)

    def _client(self, credentials: dict | None = None) -> httpx.Client:
        headers = {}
        if credentials:
            headers["Authorization"] = f"Bearer {credentials.get('access_token', '')}"
        return httpcall.client(
            base_url=settings.SANDBOX_BASE_URL.rstrip("/") + "/sandbox/api/v1",
            headers=headers,
            timeout=settings.PROVIDER_TIMEOUT_S,
        )

    def is_retry_safe(self, account: SocialAccount) -> bool:
        # The sandbox honours Idempotency-Key unless the account was told not to.
        return bool(account.settings.get("honours_idempotency_key", True))

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        expires = account.token_expires_at
        if expires is not None and expires - timezone.now() > REFRESH_MARGIN:
            return None
        try:
            with self._client() as client:
                response = client.post(
                    "/oauth/token",
                    data={
                        "grant_type": "refresh_token",
                        "refresh_token": credentials.get("refresh_token", ""),
                    },
                )
        except httpx.HTTPError as exc:
            raise classify_transport(exc, is_create=False) from exc
        if response.status_code == 400:
            raise ProviderError(
                ErrorKind.AUTH_EXPIRED,
                "The sandbox refused to refresh the token; reconnect the account.",
                code=response.json().get("error"),
                http_status=400,
            )
        if response.status_code != 200:
            raise classify_status(response, is_create=False)
        body = response.json()
        return {
            "access_token": body["access_token"],
            "refresh_token": body["refresh_token"],
            "expires_at": (timezone.now() + timedelta(seconds=body["expires_in"])).isoformat(),
        }

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        with self._client(ctx.credentials) as client:
            media_ids = [self._upload(client, media) for media in segment.media]
            payload = {"text": segment.text, "media_ids": media_ids}
            if reply_to is not None:
                payload["reply_to"] = reply_to.parent.provider_post_id
            try:
                response = client.post(
                    "/posts",
                    json=payload,
                    headers={"Idempotency-Key": ctx.idempotency_key(segment.position)},
                )
            except httpx.HTTPError as exc:
                raise classify_transport(exc, is_create=True) from exc
        if response.status_code != 200:
            raise self._classify(response, is_create=True)
        return self._published(response.json())

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """Strong reconciliation: the sandbox lists posts by idempotency key."""
        with self._client(ctx.credentials) as client:
            try:
                response = client.get(
                    "/posts", params={"idempotency_key": ctx.idempotency_key(segment.position)}
                )
            except httpx.HTTPError as exc:
                raise classify_transport(exc, is_create=False) from exc
        if response.status_code != 200:
            raise self._classify(response, is_create=False)
        posts = response.json()["posts"]
        return self._published(posts[0]) if posts else None

    def publish_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment:
        with self._client(ctx.credentials) as client:
            try:
                response = client.post(
                    "/posts",
                    json={"text": text, "comment_on": post.provider_post_id},
                    headers={"Idempotency-Key": key},
                )
            except httpx.HTTPError as exc:
                raise classify_transport(exc, is_create=True) from exc
        if response.status_code != 200:
            raise self._classify(response, is_create=True)
        return self._published(response.json())

    def find_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment | None:
        with self._client(ctx.credentials) as client:
            try:
                response = client.get(
                    "/posts", params={"comment_on": post.provider_post_id, "idempotency_key": key}
                )
            except httpx.HTTPError as exc:
                raise classify_transport(exc, is_create=False) from exc
        if response.status_code != 200:
            raise self._classify(response, is_create=False)
        comments = response.json()["posts"]
        return self._published(comments[0]) if comments else None

    def poll_segment(self, ctx: PublishContext, pending: PublishedSegment) -> PublishedSegment:
        """The status of a post the sandbox is still processing."""
        with self._client(ctx.credentials) as client:
            try:
                response = client.get(f"/posts/{pending.provider_post_id}")
            except httpx.HTTPError as exc:
                raise classify_transport(exc, is_create=False) from exc
        if response.status_code != 200:
            raise self._classify(response, is_create=False)
        body = response.json()
        if body.get("status") == "failed":
            raise ProviderError(
                ErrorKind.MEDIA_PROCESSING,
                "The sandbox could not process the post; nothing was published.",
                code="processing_failed",
                retryable=False,
                action=Action.RETRY,
            )
        return self._published(body)

    def _upload(self, client: httpx.Client, media) -> str:
        try:
            with media.open() as fh:
                response = client.post(
                    "/media",
                    files={"file": ("media", fh, media.mime_type)},
                    data={"alt_text": media.alt_text},
                )
        except httpx.HTTPError as exc:
            # An orphan upload is harmless: media uploads never create a post.
            raise classify_transport(exc, is_create=False) from exc
        if response.status_code != 200:
            raise self._classify(response, is_create=False)
        return response.json()["id"]

    def _classify(self, response: httpx.Response, *, is_create: bool) -> ProviderError:
        try:
            body = response.json()
        except ValueError:
            body = {}
        code, message = body.get("error"), body.get("message", "")
        if response.status_code == 503:
            # The sandbox's 503 is documented to come before anything is stored.
            return ProviderError(
                ErrorKind.PROVIDER_UNAVAILABLE, message, code=code, http_status=503
            )
        return classify_status(response, is_create=is_create, code=code, message=message)

    @staticmethod
    def _published(body: dict) -> PublishedSegment:
        """A post as the sandbox answers it; `pending` while it is still processing."""
        if body.get("status") == "processing":
            return PublishedSegment(provider_post_id=str(body["id"]), pending=True)
        return PublishedSegment(
            provider_post_id=str(body["id"]),
            provider_url=body.get("url", ""),
            published_at=datetime.fromisoformat(body["created_at"]),
        )


register_adapter(SandboxAdapter())

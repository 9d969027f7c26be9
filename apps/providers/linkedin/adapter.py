"""The LinkedIn adapter: member posts with text, images or one video; refresh, connect.

Posting as an organization needs w_organization_social, which LinkedIn grants only to apps
approved for its Community Management API; connect asks for member scopes, so an
organization author is refused unless the stored token was granted that scope.

LinkedIn has no threads (a reply would be a comment, which is not a post) and no
idempotency handle. Member posts cannot be listed without a restricted scope, so there is
no lookup. A resend of the same text is refused as DUPLICATE_POST naming the existing post,
so reconciliation resends once the unanswered request can no longer land: the resend makes
the one post, or the refusal names it and settles the attempt. LinkedIn documents no rule
for the refusal, so the adapter relies on it only where field reports agree:
- uploaded images are kept in the rendition's checkpoint and a resend carries the same
  image URNs (LinkedIn may compare media, and a re-upload is a new URN);
- a post the refusal names is read back and must exist, be by our author and carry our
  commentary before it settles anything (refusals have named deleted posts); one that
  does not match leaves the outcome to a person, a read throttled or failing for now
  (429, 5xx) leaves it unsettled and checked again. A member token may not read posts
  (r_member_social is restricted): then the post settles the attempt only when its id
  dates it inside the flight of our unanswered request (`_made_while_unanswered`);
- empty commentary (an image-only post) is never settled by a refusal, nor resent on the
  strength of one (`duplicate_refusal_covers`);
- the refusal holds for about a day (`duplicate_window`), so no resend leans on it later.

A first comment goes under the post as the post's author. Comments have no idempotency
handle either; an unanswered one is looked for among the post's comments, which member
tokens may only read with the restricted r_member_social.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, unquote, urlencode

import httpx
from django.conf import settings as django_settings
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.common.errors import ValidationFailed
from apps.providers import httpcall, oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    Implements,
    MediaPayload,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.linkedin.assets import wait_available
from apps.providers.linkedin.errors import classify
from apps.providers.linkedin.text import commentary
from apps.providers.linkedin.video import upload_video
from apps.providers.matching import normalize_text

API = "https://api.linkedin.com"
OAUTH = "https://www.linkedin.com/oauth/v2"
# Posting as the member. Organization pages also need w_organization_social, which LinkedIn
# grants only to apps approved for its Community Management API.
SCOPES = "openid profile w_member_social"
ORG_SCOPE = "w_organization_social"
VISIBILITIES = ("PUBLIC", "CONNECTIONS")
MAX_IMAGES = 20
# Access tokens live 60 days; refresh tokens exist only for approved partners.
REFRESH_MARGIN = timedelta(days=7)
IMAGE_POLL_S = 2.0
IMAGE_POLLS = 5
IMAGES_CHECKPOINT = "linkedin_images"  # media id -> image URN, once its bytes are uploaded
_AUTHOR = re.compile(r"^urn:li:(person|organization):[A-Za-z0-9_-]+$")
_POST_URN = re.compile(r"^urn:li:(share|ugcPost):\d+$")
# A DUPLICATE_POST refusal whose named post could not be confirmed as ours.
DUPLICATE_UNCONFIRMED = "DUPLICATE_POST_UNCONFIRMED"
# A DUPLICATE_POST refusal whose named post could not be read back for now (429, 5xx).
DUPLICATE_UNREAD = "DUPLICATE_POST_UNREAD"
# A post or comment created without its URN in the answer is recorded under this prefix.
UNIDENTIFIED = "linkedin-unidentified:"
FIND_COUNT = 10
CLOCK_SKEW = timedelta(minutes=2)
# A first comment is looked for in the post's first pages of comments, no further.
COMMENT_PAGE = 50
COMMENT_PAGES = 3

logger = logging.getLogger(__name__)


class LinkedInAdapter(Adapter):
    platform = "linkedin"
    implements = Implements(
        media_kinds=frozenset({"image", "gif", "video"}),
        max_images=MAX_IMAGES,
        max_videos=1,
        settings=frozenset({"visibility", "author"}),
        alt_text=True,
    )
    retry_safe_after_unknown = False
    duplicate_refusal_names_post = True
    # Field reports give the refusal a window of roughly 24 to 48 h: the lower bound.
    duplicate_window = timedelta(hours=24)
    # Comments are found by listing the post's comments, which may lag or be refused.
    comment_lookup_is_strong = False

    # Credentials

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        expiry = oauth.parse_expires_at(credentials.get("expires_at")) or account.token_expires_at
        if not oauth.is_near_expiry(expiry, REFRESH_MARGIN):
            return None
        if not credentials.get("refresh_token"):
            if expiry is not None and expiry <= timezone.now():
                raise ProviderError(
                    ErrorKind.AUTH_EXPIRED,
                    "The LinkedIn token expired (they last 60 days); reconnect the account.",
                    code="EXPIRED_ACCESS_TOKEN",
                )
            return None  # still valid; this app cannot refresh, the person will reconnect
        client_id, client_secret = _client_credentials()
        token = oauth.token_request(
            f"{OAUTH}/accessToken",
            {
                "grant_type": "refresh_token",
                "refresh_token": credentials["refresh_token"],
                "client_id": client_id,
                "client_secret": client_secret,
            },
        )
        return _credentials(token, previous=credentials)

    # Publishing

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        if reply_to is not None:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "LinkedIn has no threads; publish a single post.",
                code="threads_unsupported",
            )
        if self.implements.refusal(segment, reply_to=None) is not None:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "A LinkedIn post carries images (GIFs count as images) or one video, not both.",
                code="unsupported_media",
            )
        author = _author(ctx)
        visibility = str(ctx.settings.get("visibility") or "PUBLIC").upper()
        if visibility not in VISIBILITIES or (
            visibility == "CONNECTIONS" and ":organization:" in author
        ):
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "LinkedIn visibility is PUBLIC, or CONNECTIONS for a member's own posts.",
                code="invalid_visibility",
            )
        post: dict = {
            "author": author,
            "commentary": commentary(segment.text),
            "visibility": visibility,
            "distribution": {
                "feedDistribution": "MAIN_FEED",
                "targetEntities": [],
                "thirdPartyDistributionChannels": [],
            },
            "lifecycleState": "PUBLISHED",
            "isReshareDisabledByAuthor": False,
        }
        with _client(ctx.credentials) as http:
            content = self._content(http, ctx, author, segment.media)
            if content:
                post["content"] = content
            sent_at = timezone.now()
            response = httpcall.send(http, "POST", f"{API}/rest/posts", is_create=True, json=post)
            if response.status_code != 201:
                error = classify(response, is_create=True)
                if error.kind == ErrorKind.DUPLICATE_CONTENT:
                    unanswered = ctx.unanswered_sent_at(segment.position)
                    error = _confirmed_duplicate(http, post, error, unanswered=unanswered)
                raise error
            # 201 with an empty body; the new post's URN is in a header, which is sometimes
            # missing although the post exists.
            urn = _created_urn(response) or _find_created(http, post, not_before=sent_at)
        if urn is None:
            # Published, but LinkedIn did not say under which URN and this token cannot list
            # the author's posts. Never fail (a retry would post again): record it under a
            # handle that says so.
            logger.warning(
                "LinkedIn created a post without naming it",
                extra={"rendition_id": ctx.rendition_id, "position": segment.position},
            )
            return PublishedSegment(
                provider_post_id=f"{UNIDENTIFIED}{ctx.idempotency_key(segment.position)}",
                published_at=sent_at,
            )
        return PublishedSegment(
            provider_post_id=urn,
            provider_url=_post_url(urn),
            published_at=sent_at,
        )

    def publish_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment:
        """Comment under the post as its author; LinkedIn takes no idempotency handle."""
        urn, actor = _post_urn(post), _author(ctx)
        with _client(ctx.credentials) as http:
            sent_at = timezone.now()
            response = httpcall.send(
                http,
                "POST",
                _comments_url(urn),
                is_create=True,
                json={"actor": actor, "object": urn, "message": {"text": text}},
            )
        if response.status_code not in (200, 201):
            raise classify(response, is_create=True)
        comment = _comment_urn(
            httpcall.json_body(response), urn, response.headers.get("x-restli-id", "")
        )
        if comment is None:
            # Made, but not named: never fail (a retry would comment again).
            logger.warning(
                "LinkedIn created a comment without naming it",
                extra={"rendition_id": ctx.rendition_id},
            )
            return PublishedSegment(provider_post_id=f"{UNIDENTIFIED}{key}", published_at=sent_at)
        return PublishedSegment(
            provider_post_id=comment, provider_url=_comment_url(urn, comment), published_at=sent_at
        )

    def find_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment | None:
        """Our comment among the post's first pages of comments: the author's, with the same
        text. A refused listing (a member token without r_member_social) tells nothing, so
        it finds nothing and the comment is left to a person."""
        urn, author, wanted = _post_urn(post), _author(ctx), normalize_text(text)
        with _client(ctx.credentials) as http:
            for page in range(COMMENT_PAGES):
                response = httpcall.send(
                    http,
                    "GET",
                    _comments_url(urn),
                    is_create=False,
                    params={"start": page * COMMENT_PAGE, "count": COMMENT_PAGE},
                )
                if response.status_code == 403:
                    return None
                if response.status_code != 200:
                    raise classify(response, is_create=False)
                elements = httpcall.json_body(response).get("elements") or []
                for element in elements:
                    comment = _comment_urn(element, urn)
                    if (
                        comment
                        and element.get("actor") == author
                        and normalize_text((element.get("message") or {}).get("text")) == wanted
                    ):
                        created = (element.get("created") or {}).get("time")
                        return PublishedSegment(
                            provider_post_id=comment,
                            provider_url=_comment_url(urn, comment),
                            published_at=_from_millis(created) if created else None,
                        )
                if len(elements) < COMMENT_PAGE:
                    break
        return None

    # Deletion (the live validation's clean-up)

    def delete_post(self, ctx: PublishContext, post: PublishedSegment) -> None:
        """Delete one of the author's posts (its comments go with it); one already gone
        (404) counts as deleted. A post LinkedIn never named cannot be deleted here."""
        urn = post.provider_post_id
        if not _POST_URN.match(urn):
            raise ProviderError(
                ErrorKind.UNKNOWN,
                "LinkedIn did not name the post, so it cannot be deleted here; delete it on "
                "LinkedIn.",
                code="post_unidentified",
                action=Action.VERIFY,
                retryable=False,
            )
        with _client(ctx.credentials) as http:
            response = httpcall.send(
                http, "DELETE", f"{API}/rest/posts/{quote(urn, safe='')}", is_create=False
            )
        if response.status_code not in (200, 204, 404):
            raise classify(response, is_create=False)

    def duplicate_refusal_covers(self, segment: SegmentPayload) -> bool:
        """Empty commentary is no duplicate of anything: a resend would be a second post."""
        return bool(commentary(segment.text).strip())

    def _content(
        self, http: httpx.Client, ctx: PublishContext, author: str, media: list[MediaPayload]
    ) -> dict | None:
        if not media:
            return None
        if any(m.kind == "video" for m in media):
            if len(media) > 1:
                raise ProviderError(
                    ErrorKind.CONTENT_REJECTED,
                    "A LinkedIn video post carries one video and nothing else.",
                    code="one_video_only",
                )
            return {"media": {"id": upload_video(http, ctx, author, media[0])}}
        if len(media) > MAX_IMAGES:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                f"LinkedIn takes at most {MAX_IMAGES} images per post.",
                code="too_many_images",
            )
        images = [
            {"id": self._upload_image(http, ctx, author, m), "altText": m.alt_text} for m in media
        ]
        if len(images) == 1:
            return {"media": images[0]}
        return {"multiImage": {"images": images}}

    def _upload_image(
        self, http: httpx.Client, ctx: PublishContext, owner: str, media: MediaPayload
    ) -> str:
        """initializeUpload, one PUT of the bytes, then wait for AVAILABLE where readable.
        An image uploaded by an earlier attempt is reused: a resend must carry the same URNs
        for LinkedIn to see the same post in it."""
        done = (ctx.checkpoint.get(IMAGES_CHECKPOINT) or {}).get(str(media.media_id))
        if done:
            wait_available(http, done, kind="image", polls=IMAGE_POLLS, interval_s=IMAGE_POLL_S)
            return done
        response = httpcall.send(
            http,
            "POST",
            f"{API}/rest/images",
            is_create=False,  # an unused image never becomes a post
            params={"action": "initializeUpload"},
            json={"initializeUploadRequest": {"owner": owner}},
        )
        if response.status_code != 200:
            raise classify(response, is_create=False)
        value = response.json()["value"]
        with media.open() as fh:
            put = httpcall.send(http, "PUT", value["uploadUrl"], is_create=False, content=fh.read())
        if put.status_code not in (200, 201):
            raise classify(put, is_create=False)
        ctx.checkpoint[IMAGES_CHECKPOINT] = {
            **(ctx.checkpoint.get(IMAGES_CHECKPOINT) or {}),
            str(media.media_id): value["image"],
        }
        ctx.persist_checkpoint()
        wait_available(
            http, value["image"], kind="image", polls=IMAGE_POLLS, interval_s=IMAGE_POLL_S
        )
        return value["image"]

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        # LinkedIn's web-app code flow takes no PKCE; the state alone binds the callback.
        client_id, _ = _client_credentials()
        query = urlencode(
            {
                "response_type": "code",
                "client_id": client_id,
                "redirect_uri": redirect_uri,
                "state": state,
                "scope": SCOPES,
            }
        )
        return f"{OAUTH}/authorization?{query}"

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        client_id, client_secret = _client_credentials()
        token = oauth.token_request(
            f"{OAUTH}/accessToken",
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "client_id": client_id,
                "client_secret": client_secret,
            },
        )
        credentials = _credentials(token)
        with _client(credentials) as http:
            response = httpcall.send(http, "GET", f"{API}/v2/userinfo", is_create=False)
        if response.status_code != 200:
            raise classify(response, is_create=False)
        me = response.json()
        name = me.get("name") or " ".join(
            filter(None, [me.get("given_name"), me.get("family_name")])
        )
        return ConnectedIdentity(
            remote_id=me["sub"],
            handle=name or me["sub"],
            display_name=name,
            credentials=credentials,
            token_expires_at=oauth.parse_expires_at(credentials.get("expires_at")),
            settings={"author_urn": f"urn:li:person:{me['sub']}"},
        )


def _created_urn(response: httpx.Response) -> str | None:
    """The URN of a created post: `x-restli-id`, else the Rest.li `Location` path."""
    urn = response.headers.get("x-restli-id", "").strip()
    if urn:
        return urn
    tail = unquote(response.headers.get("Location", "").rstrip("/").rsplit("/", 1)[-1])
    return tail if _POST_URN.match(tail) else None


def _confirmed_duplicate(
    http: httpx.Client, post: dict, refusal: ProviderError, *, unanswered: list[datetime]
) -> ProviderError:
    """The DUPLICATE_POST refusal, naming its post only once that post is read back and is
    ours: it exists, is by our author and carries our commentary. Otherwise the refusal
    names nothing (and says why), so it settles nothing: empty commentary, a post that
    answers 404 (refusals have named deleted posts), one that is someone else's or says
    something else, or one this token may not read (member posts need r_member_social)
    unless its id dates it inside the flight of one of our `unanswered` requests."""
    named = refusal.existing_post_id
    why = _unconfirmed(http, post, named, unanswered)
    if why is None:
        return refusal
    where = f" See {_post_url(named)}." if named else ""
    return ProviderError(
        ErrorKind.DUPLICATE_CONTENT,
        f"LinkedIn refused the post as a duplicate, but not confirmed: {why}.{where}",
        code=DUPLICATE_UNCONFIRMED,
        http_status=refusal.http_status,
        action=Action.VERIFY,
        retryable=False,
    )


def _unconfirmed(
    http: httpx.Client, post: dict, named: str | None, unanswered: list[datetime]
) -> str | None:
    """Why the post a refusal names cannot be taken as ours, or None when it can."""
    if not post["commentary"].strip():
        return "empty commentary is no duplicate of anything"
    if not named or not _POST_URN.match(named):
        return "the refusal names no post"
    try:
        response = httpcall.send(
            http, "GET", f"{API}/rest/posts/{quote(named, safe='')}", is_create=False
        )
    except ProviderError as err:
        if err.retryable and not _made_while_unanswered(named, unanswered):
            raise _unread(named, err) from None
        return None if err.retryable else f"reading it failed ({err.code})"
    if response.status_code == 429 or response.status_code >= 500:
        # The read says nothing for now: the id's date still may.
        if _made_while_unanswered(named, unanswered):
            return None
        raise _unread(named, classify(response, is_create=False))
    if response.status_code == 404:
        return f"{named} does not exist"
    if response.status_code in (401, 403):
        if _made_while_unanswered(named, unanswered):
            return None
        return f"this token may not read {named}, and its id does not date it to our request"
    if response.status_code != 200:
        return f"reading {named} answered HTTP {response.status_code}"
    found = httpcall.json_body(response)
    if found.get("author") != post["author"]:
        return f"{named} is another author's post"
    if normalize_text(found.get("commentary")) != normalize_text(post["commentary"]):
        return f"{named} carries other text"
    return None


def _made_while_unanswered(urn: str, unanswered: list[datetime]) -> bool:
    """Whether the post's id dates it inside the flight of one of our unanswered requests
    (from its send until it can no longer land, give or take the clocks' difference): then,
    being by our author with our text (the refusal says so), it is that request's post.
    LinkedIn's post ids carry their creation time (milliseconds since 1970 above the lowest
    22 bits); no documentation promises it, so an id that does not read that way dates
    nothing and settles nothing. A deleted post's id, or an older post with the same text,
    dates outside the flight."""
    try:
        made = datetime.fromtimestamp((int(urn.rsplit(":", 1)[1]) >> 22) / 1000, tz=UTC)
    except (ValueError, OverflowError, OSError):
        return False
    reach = timedelta(seconds=django_settings.RECONCILE_SETTLE_S) + CLOCK_SKEW
    return any(sent - CLOCK_SKEW <= made <= sent + reach for sent in unanswered)


def _unread(named: str, err: ProviderError) -> ProviderError:
    """Reading the named post was throttled or failed for now: that says nothing about the
    post, so the refusal neither settles the attempt nor hands it to a person. The error is
    the read's (retried at the time it allows); after an unanswered attempt the rendition
    stays ambiguous and its next check resends and reads again."""
    return ProviderError(
        err.kind,
        f"LinkedIn refused the post as a duplicate of {named}, but reading that post back "
        f"failed for now ({err.message}); it is checked again later.",
        code=DUPLICATE_UNREAD,
        http_status=err.http_status,
        retry_at=err.retry_at,
        retryable=True,
    )


def _post_url(urn: str) -> str:
    return f"https://www.linkedin.com/feed/update/{urn}"


def _find_created(http: httpx.Client, post: dict, *, not_before) -> str | None:
    """The post just created, among the author's newest (organizations; member posts are
    listed only with r_member_social). None when the token may not list or nothing matches."""
    author = quote(post["author"], safe="")
    try:
        response = httpcall.send(
            http,
            "GET",
            f"{API}/rest/posts?q=author&author={author}&count={FIND_COUNT}&sortBy=LAST_MODIFIED",
            is_create=False,
        )
    except ProviderError:
        return None
    if response.status_code != 200:
        return None
    earliest = (not_before - CLOCK_SKEW).timestamp() * 1000
    for element in httpcall.json_body(response).get("elements") or []:
        if (
            element.get("commentary") == post["commentary"]
            and (element.get("createdAt") or 0) >= earliest
            and _POST_URN.match(str(element.get("id", "")))
        ):
            return element["id"]
    return None


def _post_urn(post: PublishedSegment) -> str:
    """The URN a comment goes under; a post LinkedIn never named cannot take one."""
    if not _POST_URN.match(post.provider_post_id):
        raise ProviderError(
            ErrorKind.UNKNOWN,
            "LinkedIn did not name the post, so the comment cannot be placed under it; "
            "add it on LinkedIn.",
            code="post_unidentified",
            action=Action.VERIFY,
            retryable=False,
        )
    return post.provider_post_id


def _comments_url(urn: str) -> str:
    return f"{API}/rest/socialActions/{quote(urn, safe='')}/comments"


def _comment_urn(comment: dict, post_urn: str, restli_id: str = "") -> str | None:
    """A comment's URN: `commentUrn` (`$URN` in older versions), else composed from its id
    (or the create's `x-restli-id`) and the thread it is under."""
    urn = comment.get("commentUrn") or comment.get("$URN")
    if urn:
        return str(urn)
    comment_id = unquote(str(comment.get("id") or restli_id)).strip()
    if not comment_id:
        return None
    if comment_id.startswith("urn:li:comment:"):
        return comment_id
    return f"urn:li:comment:({comment.get('object') or post_urn},{comment_id})"


def _comment_url(post_urn: str, comment_urn: str) -> str:
    return (
        f"https://www.linkedin.com/feed/update/{post_urn}?commentUrn={quote(comment_urn, safe='')}"
    )


def _from_millis(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1000, tz=UTC)


def _author(ctx: PublishContext) -> str:
    """Who posts: the rendition may name an organization the member administers; otherwise
    the account's author (the member, or a page it was configured for)."""
    author = (
        ctx.settings.get("author")
        or ctx.account.settings.get("author_urn")
        or f"urn:li:person:{ctx.account.remote_id}"
    )
    if not _AUTHOR.match(author):
        raise ProviderError(
            ErrorKind.CONTENT_REJECTED,
            "A LinkedIn author is urn:li:person:… or urn:li:organization:….",
            code="invalid_author",
        )
    granted = str(ctx.credentials.get("scope") or "").replace(",", " ").split()
    if ":organization:" in author and ORG_SCOPE not in granted:
        raise ProviderError(
            ErrorKind.PERMISSION_MISSING,
            "Only member posting works on LinkedIn here: posting as a page needs "
            "w_organization_social, which LinkedIn grants to apps approved for its "
            "Community Management API.",
            code="organization_scope_missing",
        )
    return author


def _credentials(token: dict, previous: dict | None = None) -> dict:
    credentials = dict(previous or {})
    credentials["access_token"] = token["access_token"]
    expiry = oauth.expires_at(token.get("expires_in"))
    credentials["expires_at"] = expiry.isoformat() if expiry else None
    if token.get("scope"):
        credentials["scope"] = token["scope"]  # what was granted, e.g. for organization posts
    if token.get("refresh_token"):
        credentials["refresh_token"] = token["refresh_token"]
        # The refresh token's life counts from the first authorization, not this refresh.
        refresh_expiry = oauth.expires_at(token.get("refresh_token_expires_in") or None)
        if refresh_expiry is not None:
            credentials["refresh_token_expires_at"] = refresh_expiry.isoformat()
    return credentials


def _client(credentials: dict) -> httpx.Client:
    return httpcall.client(
        headers={
            "Authorization": f"Bearer {credentials['access_token']}",
            "LinkedIn-Version": django_settings.LINKEDIN_API_VERSION,
            "X-Restli-Protocol-Version": "2.0.0",
        }
    )


def _client_credentials() -> tuple[str, str]:
    client_id = django_settings.LINKEDIN_CLIENT_ID
    client_secret = django_settings.LINKEDIN_CLIENT_SECRET
    if not client_id or not client_secret:
        raise ValidationFailed(
            "LinkedIn is not configured on this site (LINKEDIN_CLIENT_ID/SECRET).",
            code="NOT_CONFIGURED",
        )
    return client_id, client_secret


register_adapter(LinkedInAdapter())

"""The sandbox platform's HTTP API, served by the project itself over real HTTP.

Adapters reach it at SANDBOX_BASE_URL exactly as they would reach a real platform, so the
real HTTP path (timeouts included) is exercised. Plain Django views: this is a stand-in for
somebody else's API, not part of ours.
"""

import json
import random
import time
from datetime import timedelta

import regex
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Sum
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from apps.common.envelope import envelope
from apps.common.errors import DomainError
from apps.sandbox.behaviour import held_seconds
from apps.sandbox.models import SandboxAccount, SandboxMedia, SandboxPost
from apps.sandbox.viewers import viewer_workspaces

ACCESS_TOKEN_TTL = timedelta(hours=24)
# A multipart body may exceed its file by its boundaries and other fields (alt text).
MULTIPART_OVERHEAD_BYTES = 64 * 1024


def _error(status: int, code: str, message: str, **headers) -> JsonResponse:
    response = JsonResponse({"error": code, "message": message}, status=status)
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


def _enabled() -> None:
    if not settings.SANDBOX_ENABLED:
        raise Http404("The sandbox is disabled.")


def _authenticated(request: HttpRequest) -> SandboxAccount | None:
    keyword, _, token = request.headers.get("Authorization", "").partition(" ")
    if keyword.lower() != "bearer" or not token:
        return None
    return SandboxAccount.objects.filter(access_token=token.strip()).first()


def _delay(account: SandboxAccount) -> None:
    latency_s, _ = held_seconds(account.behaviour, hang=False)
    if latency_s:
        time.sleep(latency_s)


def _use_counter(account: SandboxAccount, name: str) -> bool:
    """Spend one of the account's counted misbehaviours; the row is locked by the caller."""
    left = account.counters.get(name, 0)
    if left <= 0:
        return False
    account.counters[name] = left - 1
    account.save(update_fields=["counters", "updated_at"])
    return True


def _unlucky(behaviour: dict) -> bool:
    """True for the share of posts `server_error_percent` asks to fail now and then."""
    percent = behaviour.get("server_error_percent") or 0
    return percent > 0 and random.randrange(100) < percent  # noqa: S311 - not security


def _post_json(post: SandboxPost) -> dict:
    return {
        "id": str(post.pk),
        "url": f"{settings.SANDBOX_BASE_URL.rstrip('/')}/sandbox/@{post.account.handle}/{post.pk}",
        "text": post.text,
        "idempotency_key": post.idempotency_key or None,
        "reply_to": str(post.reply_to_id) if post.reply_to_id and not post.is_comment else None,
        "comment_on": str(post.reply_to_id) if post.is_comment else None,
        "media": [m.pk for m in post.media.all()],
        "status": post.status,
        "created_at": post.created_at.isoformat(),
    }


@csrf_exempt
def posts_endpoint(request: HttpRequest) -> HttpResponse:
    """/sandbox/api/v1/posts: POST creates, GET lists the caller's posts."""
    if request.method == "POST":
        return create_post(request)
    if request.method == "GET":
        return list_own_posts(request)
    return _error(405, "method_not_allowed", "Use GET or POST.")


def create_post(request: HttpRequest) -> HttpResponse:
    """POST /sandbox/api/v1/posts {text, reply_to? | comment_on?, media_ids?} with
    Idempotency-Key. `comment_on` makes a comment under that post (published at once)."""
    _enabled()
    account = _authenticated(request)
    if account is None:
        return _error(401, "invalid_token", "The access token is invalid.")
    _delay(account)
    try:
        body = json.loads(request.body or b"{}")
        text = str(body.get("text", ""))
    except (ValueError, AttributeError):
        return _error(400, "bad_request", "The body must be a JSON object.")
    key = request.headers.get("Idempotency-Key", "")[:200]
    hang = False
    with transaction.atomic():
        account = SandboxAccount.objects.select_for_update().get(pk=account.pk)
        behaviour = account.behaviour
        if behaviour.get("expired_token"):
            return _error(401, "token_expired", "The access token has expired.")
        if _use_counter(account, "rate_limit_times"):
            retry_after = str(behaviour.get("retry_after_s", 1))
            return _error(429, "rate_limited", "Too many requests.", Retry_After=retry_after)
        if _use_counter(account, "server_error_times") or _unlucky(behaviour):
            return _error(503, "unavailable", "The sandbox is unavailable; nothing was stored.")
        if behaviour.get("reject_content"):
            return _error(422, "content_rejected", "This content is not allowed here.")
        limit = behaviour.get("text_limit") or 500
        if len(regex.findall(r"\X", text)) > limit:  # grapheme clusters
            return _error(422, "text_too_long", f"Text character limit of {limit} exceeded.")
        if key and behaviour.get("honours_idempotency_key", True):
            existing = account.posts.filter(idempotency_key=key, processing_fails=False).first()
            if existing is not None:
                return JsonResponse(_post_json(existing))
        reply_to = None
        parent = body.get("comment_on") or body.get("reply_to")
        if parent:
            reply_to = account.posts.filter(pk=str(parent), is_comment=False).first()
            if reply_to is None:
                return _error(422, "reply_not_found", "The post to reply to does not exist.")
        media_ids = body.get("media_ids") or []
        media = list(account.media.filter(pk__in=[str(m) for m in media_ids]))
        if len(media) != len(media_ids):
            return _error(422, "media_not_found", "Unknown media id.")
        is_comment = bool(body.get("comment_on"))
        # Posts may be processed asynchronously; comments are published at once.
        processing_s = 0 if is_comment else behaviour.get("processing_s") or 0
        post = SandboxPost.objects.create(
            account=account,
            text=text,
            idempotency_key=key,
            reply_to=reply_to,
            is_comment=is_comment,
            ready_at=timezone.now() + timedelta(seconds=processing_s) if processing_s else None,
            processing_fails=not is_comment and _use_counter(account, "processing_fail_times"),
        )
        post.media.set(media)
        if _use_counter(account, "lost_answer_times"):
            # Stored and committed, but the client cannot know it: an unknown outcome that
            # holds no thread, unlike a hang.
            return _error(504, "gateway_timeout", "The gateway lost the answer.")
        hang = _use_counter(account, "hang_after_accept_times")
    if hang:
        # The post is stored and committed; the answer comes too late for the client.
        body = _post_json(post)
        connection.close()  # hold no database session while hanging
        _, hang_s = held_seconds(behaviour, hang=True)
        time.sleep(hang_s)
        return JsonResponse(body)
    return JsonResponse(_post_json(post))


@require_GET
def post_status(request: HttpRequest, post_id: int) -> HttpResponse:
    """GET /sandbox/api/v1/posts/<id>: one post and its processing status (the poll)."""
    _enabled()
    account = _authenticated(request)
    if account is None:
        return _error(401, "invalid_token", "The access token is invalid.")
    _delay(account)
    with transaction.atomic():
        account = SandboxAccount.objects.select_for_update().get(pk=account.pk)
        if _use_counter(account, "status_rate_limit_times"):
            retry_after = str(account.behaviour.get("retry_after_s", 1))
            return _error(429, "rate_limited", "Too many status requests.", Retry_After=retry_after)
    post = account.posts.filter(pk=post_id).first()
    if post is None:
        return _error(404, "not_found", "No such post.")
    return JsonResponse(_post_json(post))


@csrf_exempt
@require_POST
def upload_media(request: HttpRequest) -> HttpResponse:
    """POST /sandbox/api/v1/media, multipart with `file` and `alt_text`.

    Uploads are bounded: SANDBOX_MEDIA_MAX_BYTES per file (a larger body is refused before
    it is read), SANDBOX_MEDIA_PER_ACCOUNT files and SANDBOX_MEDIA_BYTES_PER_ACCOUNT bytes
    per account."""
    _enabled()
    account = _authenticated(request)
    if account is None:
        return _error(401, "invalid_token", "The access token is invalid.")
    if account.behaviour.get("expired_token"):
        return _error(401, "token_expired", "The access token has expired.")
    max_bytes = settings.SANDBOX_MEDIA_MAX_BYTES
    too_large = _error(413, "media_too_large", f"A sandbox upload is at most {max_bytes} bytes.")
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > max_bytes + MULTIPART_OVERHEAD_BYTES:
        return too_large
    upload = request.FILES.get("file")
    if upload is None:
        return _error(422, "file_missing", "Send the media as multipart field 'file'.")
    upload_bytes = upload.size or 0
    if upload_bytes > max_bytes:
        return too_large
    with transaction.atomic():
        # Locked so that concurrent uploads cannot pass the account's bounds together.
        account = SandboxAccount.objects.select_for_update().get(pk=account.pk)
        held = account.media.aggregate(files=Count("id"), size=Sum("size_bytes"))
        files, size = held["files"], held["size"] or 0
        if files >= settings.SANDBOX_MEDIA_PER_ACCOUNT:
            return _error(
                413,
                "media_limit_reached",
                f"This account holds {files} uploads, the most a sandbox account may "
                f"({settings.SANDBOX_MEDIA_PER_ACCOUNT}).",
            )
        if size + upload_bytes > settings.SANDBOX_MEDIA_BYTES_PER_ACCOUNT:
            return _error(
                413,
                "media_limit_reached",
                f"This upload would take the account past "
                f"{settings.SANDBOX_MEDIA_BYTES_PER_ACCOUNT} bytes of sandbox media.",
            )
        media = SandboxMedia.objects.create(
            account=account,
            size_bytes=upload_bytes,
            mime_type=upload.content_type or "",
            alt_text=request.POST.get("alt_text", "")[:1500],
        )
    return JsonResponse({"id": str(media.pk), "size": media.size_bytes, "alt_text": media.alt_text})


def list_own_posts(request: HttpRequest) -> HttpResponse:
    """GET /sandbox/api/v1/posts?idempotency_key=&comment_on=&since= : the account's posts
    and comments (reconciliation)."""
    _enabled()
    account = _authenticated(request)
    if account is None:
        return _error(401, "invalid_token", "The access token is invalid.")
    if not account.behaviour.get("lists_posts", True):
        return _error(403, "listing_unavailable", "This account's posts cannot be listed.")
    posts = account.posts.filter(processing_fails=False)
    posts = posts.select_related("account").prefetch_related("media")
    if request.GET.get("idempotency_key"):
        posts = posts.filter(idempotency_key=request.GET["idempotency_key"])
    if request.GET.get("comment_on", "").isdigit():
        posts = posts.filter(is_comment=True, reply_to_id=int(request.GET["comment_on"]))
    since = parse_datetime(request.GET.get("since", "") or "")
    if since is not None:
        posts = posts.filter(created_at__gte=since)
    return JsonResponse({"posts": [_post_json(p) for p in posts[:100]]})


@csrf_exempt
@require_POST
def oauth_token(request: HttpRequest) -> HttpResponse:
    """POST /sandbox/api/v1/oauth/token grant_type=refresh_token&refresh_token=..."""
    _enabled()
    data = request.POST or json.loads(request.body or b"{}")
    if data.get("grant_type") != "refresh_token":
        return _error(400, "unsupported_grant_type", "Only refresh_token is supported.")
    with transaction.atomic():
        account = (
            SandboxAccount.objects.select_for_update()
            .filter(refresh_token=data.get("refresh_token", ""))
            .first()
        )
        if account is None or account.behaviour.get("expired_token"):
            return _error(400, "invalid_grant", "The refresh token is invalid or revoked.")
        account.access_token = SandboxAccount._meta.get_field("access_token").default()
        account.refresh_token = SandboxAccount._meta.get_field("refresh_token").default()
        account.save(update_fields=["access_token", "refresh_token", "updated_at"])
    return JsonResponse(
        {
            "access_token": account.access_token,
            "refresh_token": account.refresh_token,
            "expires_in": int(ACCESS_TOKEN_TTL.total_seconds()),
        }
    )


def _refused(exc: DomainError) -> JsonResponse:
    return JsonResponse(envelope(exc.code, exc.message, exc.details), status=exc.http_status)


def _not_found(message: str) -> JsonResponse:
    return JsonResponse(envelope("NOT_FOUND", message), status=404)


@require_GET
def witness(request: HttpRequest) -> HttpResponse:
    """GET /sandbox/posts?handle=...[&workspace=<slug>] : everything the sandbox holds for
    that account, for its own workspace only (see viewers.py). `workspace` picks among the
    signed-in user's workspaces when several hold the handle."""
    _enabled()
    try:
        workspaces = viewer_workspaces(request)
    except DomainError as exc:
        return _refused(exc)
    accounts = SandboxAccount.objects.filter(
        workspace__in=workspaces, handle=request.GET.get("handle", "")
    )
    if request.GET.get("workspace"):
        accounts = accounts.filter(workspace__slug=request.GET["workspace"])
    found = list(accounts.select_related("workspace")[:2])
    if not found:
        return _not_found("No sandbox account with that handle in your workspace.")
    if len(found) > 1:
        return JsonResponse(
            envelope(
                "AMBIGUOUS_HANDLE",
                "Several of your workspaces hold this handle; add ?workspace=<slug>.",
                {"workspaces": sorted(a.workspace.slug for a in found)},
            ),
            status=400,
        )
    account = found[0]
    # What the platform shows: a post whose processing failed was never published.
    posts = account.posts.filter(processing_fails=False)
    posts = posts.select_related("account").prefetch_related("media")
    return JsonResponse(
        {"handle": account.handle, "count": posts.count(), "posts": [_post_json(p) for p in posts]}
    )


@require_GET
def post_page(request: HttpRequest, handle: str, post_id: int) -> HttpResponse:
    """The page a provider URL points at, for the owning workspace only."""
    _enabled()
    try:
        workspaces = viewer_workspaces(request)
    except DomainError as exc:
        return _refused(exc)
    post = (
        SandboxPost.objects.select_related("account")
        .filter(pk=post_id, account__handle=handle, account__workspace__in=workspaces)
        .first()
    )
    if post is None:
        return _not_found("No such sandbox post in your workspace.")
    return JsonResponse(_post_json(post))

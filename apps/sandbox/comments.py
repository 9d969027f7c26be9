"""The sandbox's comments: others' comments under an account's posts, read by the inbox,
and the account's replies to them.

Visitors are other sandbox accounts of the same workspace (``sandbox_comment_add`` opens
one by handle), so a demo or a test can make a conversation. A reply honours its
Idempotency-Key like a post, and spends the account's counted misbehaviours
(``rate_limit_times``, ``lost_answer_times``, ``hang_after_accept_times``) the same way; a
read spends ``read_rate_limit_times`` (a counter set on the account, not a behaviour).
"""

from __future__ import annotations

import json
import time

from django.conf import settings
from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.dateparse import parse_datetime
from django.views.decorators.csrf import csrf_exempt

from apps.sandbox.behaviour import held_seconds
from apps.sandbox.models import SandboxAccount, SandboxPost
from apps.sandbox.server import _authenticated, _enabled, _error, _use_counter


def sandbox_comment_add(
    *, post: SandboxPost, handle: str, text: str, reply_to: SandboxPost | None = None
) -> SandboxPost:
    """A visitor's comment under `post` (or under `reply_to`, a comment of its thread)."""
    visitor, _ = SandboxAccount.objects.get_or_create(
        workspace_id=post.account.workspace_id, handle=handle
    )
    return SandboxPost.objects.create(
        account=visitor, text=text, reply_to=reply_to or post, is_comment=True
    )


def _thread(post: SandboxPost) -> list[SandboxPost]:
    """Every comment under the post, at any depth, oldest first."""
    found: list[SandboxPost] = []
    parents = [post.pk]
    while parents:
        level = list(
            SandboxPost.objects.filter(reply_to_id__in=parents, is_comment=True).select_related(
                "account"
            )
        )
        found.extend(level)
        parents = [c.pk for c in level]
    return sorted(found, key=lambda c: c.pk)


def _comment_json(comment: SandboxPost, post_id: int) -> dict:
    base = settings.SANDBOX_BASE_URL.rstrip("/")
    return {
        "id": str(comment.pk),
        "text": comment.text,
        "author": {"id": str(comment.account_id), "handle": comment.account.handle},
        "parent": None if comment.reply_to_id == post_id else str(comment.reply_to_id),
        "idempotency_key": comment.idempotency_key or None,
        "created_at": comment.created_at.isoformat(),
        "url": f"{base}/sandbox/@{comment.account.handle}/{comment.pk}",
    }


def list_comments(request: HttpRequest, post_id: int) -> HttpResponse:
    """GET /sandbox/api/v1/posts/<id>/comments?since= : the thread under one of the
    caller's posts."""
    _enabled()
    account = _authenticated(request)
    if account is None:
        return _error(401, "invalid_token", "The access token is invalid.")
    with transaction.atomic():
        locked = SandboxAccount.objects.select_for_update().get(pk=account.pk)
        if _use_counter(locked, "read_rate_limit_times"):
            retry_after = str(locked.behaviour.get("retry_after_s", 1))
            return _error(429, "rate_limited", "Too many requests.", Retry_After=retry_after)
    post = account.posts.filter(pk=post_id).first()
    if post is None:
        return _error(404, "not_found", "No such post.")
    comments = _thread(post)
    since = parse_datetime(request.GET.get("since", "") or "")
    if since is not None:
        comments = [c for c in comments if c.created_at >= since]
    return JsonResponse({"comments": [_comment_json(c, post.pk) for c in comments[:500]]})


@csrf_exempt
def comment_replies(request: HttpRequest, comment_id: int) -> HttpResponse:
    """/sandbox/api/v1/comments/<id>/replies: POST {text} with Idempotency-Key replies as
    the caller; GET ?idempotency_key= finds the caller's reply by its key."""
    _enabled()
    account = _authenticated(request)
    if account is None:
        return _error(401, "invalid_token", "The access token is invalid.")
    comment = (
        SandboxPost.objects.filter(
            pk=comment_id, is_comment=True, account__workspace_id=account.workspace_id
        )
        .select_related("account")
        .first()
    )
    if comment is None:
        return _error(404, "not_found", "No such comment.")
    key = request.GET.get("idempotency_key") or request.headers.get("Idempotency-Key", "")
    if request.method == "GET":
        found = account.posts.filter(reply_to=comment, is_comment=True, idempotency_key=key)
        return JsonResponse({"replies": [_comment_json(r, 0) for r in found if key]})
    if request.method != "POST":
        return _error(405, "method_not_allowed", "Use GET or POST.")
    try:
        text = str(json.loads(request.body or b"{}").get("text", ""))
    except (ValueError, AttributeError):
        return _error(400, "bad_request", "The body must be a JSON object.")
    return _reply(account, comment, text, key[:200])


def _reply(account: SandboxAccount, comment: SandboxPost, text: str, key: str) -> HttpResponse:
    """A reply spends the account's counted misbehaviours as a post does: a 429, a lost
    answer (504 after storing), or an answer held past the client's timeout."""
    with transaction.atomic():
        account = SandboxAccount.objects.select_for_update().get(pk=account.pk)
        behaviour = account.behaviour
        if behaviour.get("expired_token"):
            return _error(401, "token_expired", "The access token has expired.")
        if _use_counter(account, "rate_limit_times"):
            retry_after = str(behaviour.get("retry_after_s", 1))
            return _error(429, "rate_limited", "Too many requests.", Retry_After=retry_after)
        honours = behaviour.get("honours_idempotency_key", True)
        existing = account.posts.filter(reply_to=comment, idempotency_key=key).first()
        if key and honours and existing is not None:
            return JsonResponse(_comment_json(existing, 0))
        reply = SandboxPost.objects.create(
            account=account, text=text, idempotency_key=key, reply_to=comment, is_comment=True
        )
        if _use_counter(account, "lost_answer_times"):
            return _error(504, "gateway_timeout", "The gateway lost the answer.")
        hang = _use_counter(account, "hang_after_accept_times")
    body = _comment_json(reply, 0)
    if hang:
        # Stored and committed; the answer comes too late for the client.
        connection.close()  # hold no database session while hanging
        time.sleep(held_seconds(behaviour, hang=True)[1])
    return JsonResponse(body)


@csrf_exempt
def delete_comment(request: HttpRequest, comment_id: int) -> HttpResponse:
    """DELETE /sandbox/api/v1/comments/<id>: a comment under one of the caller's posts
    (or the caller's own); one already gone is deleted."""
    _enabled()
    account = _authenticated(request)
    if account is None:
        return _error(401, "invalid_token", "The access token is invalid.")
    if request.method != "DELETE":
        return _error(405, "method_not_allowed", "Use DELETE.")
    comment = SandboxPost.objects.filter(
        pk=comment_id, is_comment=True, account__workspace_id=account.workspace_id
    ).first()
    if comment is not None:
        comment.delete()
    return JsonResponse({"deleted": True})

"""The inbox: comments under the workspace's posts, with filters and a live list, one
comment's thread with the reply form, and the actions a role allows (viewers read; editors
reply, mark done, assign, hide and delete where the platform allows it; admins approve held
replies and decide whether editors' replies are held)."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.models import SocialAccount, User
from apps.accounts.permissions import Action
from apps.common.errors import DomainError
from apps.inbox.models import Comment, Reply
from apps.inbox.replies import reply_mark_sent, reply_retry
from apps.inbox.selectors import (
    CommentFilters,
    comment_list,
    comment_offer,
    comment_thread,
    read_state,
)
from apps.inbox.services import (
    comment_assign,
    comment_moderate,
    comment_set_state,
    inbox_settings,
    inbox_settings_update,
    reply_decide,
    reply_submit,
)
from apps.web.access import WorkspaceRequest, is_htmx, permits, workspace_view
from apps.web.views.common import redirect_to

PAGE_SIZE = 100
# Seconds between two reads of the list by an open page.
POLL_S = 20


def _filters(request: WorkspaceRequest) -> tuple[CommentFilters, dict]:
    """The filters of the query string, and the same values for the form."""
    query = request.GET
    raw_account, raw_state = query.get("account", ""), query.get("state", "open")
    account = int(raw_account) if raw_account.isdigit() else None
    platform = query.get("platform", "")
    unanswered, mine = query.get("unanswered") == "on", query.get("mine") == "on"
    state = raw_state if raw_state in ("open", "done", "all") else "open"
    filters = CommentFilters(
        account=account,
        platform=platform,
        unanswered=unanswered,
        assigned_to=request.user if mine else None,
        state="" if state == "all" else state,
    )
    chosen = {
        "account": account,
        "platform": platform,
        "unanswered": unanswered,
        "mine": mine,
        "state": state,
    }
    return filters, chosen


@workspace_view(Action.VIEW)
@require_GET
def inbox_page(request: WorkspaceRequest) -> HttpResponse:
    workspace = request.workspace
    filters, chosen = _filters(request)
    comments = list(comment_list(workspace, filters)[:PAGE_SIZE])
    context = {
        "workspace": workspace,
        "section": "inbox",
        "comments": comments,
        "chosen": chosen,
        "poll_s": POLL_S,
        "query": request.GET.urlencode(),
    }
    if is_htmx(request):
        return render(request, "web/inbox/_list.html", context)
    accounts = SocialAccount.objects.for_workspace(workspace).order_by("platform", "handle")
    context |= {
        "accounts": accounts,
        "platforms": sorted({a.platform for a in accounts}),
        "settings": inbox_settings(workspace),
        "can_admin": permits(request, workspace, Action.ADMIN),
    }
    return render(request, "web/inbox/page.html", context)


def _comment(request: WorkspaceRequest, pk: int) -> Comment:
    return get_object_or_404(
        Comment.objects.for_workspace(request.workspace).filter(is_deleted=False), pk=pk
    )


@workspace_view(Action.VIEW)
@require_GET
def inbox_thread(request: WorkspaceRequest, pk: int) -> HttpResponse:
    workspace = request.workspace
    comment = _comment(request, pk)
    members = (
        User.objects.filter(
            Q(workspace_memberships__workspace=workspace)
            | Q(
                organization_memberships__organization_id=workspace.organization_id,
                organization_memberships__role__in=("owner", "admin"),
            )
        )
        .distinct()
        .order_by("name", "email")
    )
    context = {
        "workspace": workspace,
        "section": "inbox",
        "comment": comment,
        "thread": comment_thread(comment),
        "offer": comment_offer(comment),
        "sync": read_state(comment),
        "members": members,
        "can_edit": permits(request, workspace, Action.EDIT),
        "can_publish": permits(request, workspace, Action.PUBLISH),
        "can_admin": permits(request, workspace, Action.ADMIN),
        "poll_s": POLL_S,
    }
    template = "web/inbox/_thread.html" if is_htmx(request) else "web/inbox/thread.html"
    return render(request, template, context)


def _back(request: WorkspaceRequest, comment: Comment) -> HttpResponse:
    return redirect_to(request, reverse("inbox-thread", args=[request.workspace.slug, comment.pk]))


def _act(request: WorkspaceRequest, pk: int, do, done: str) -> HttpResponse:
    comment = _comment(request, pk)
    try:
        do(comment)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, done)
    return _back(request, comment)


@workspace_view(Action.PUBLISH)
@require_POST
def inbox_reply(request: WorkspaceRequest, pk: int) -> HttpResponse:
    text = request.POST.get("text", "")
    return _act(
        request,
        pk,
        lambda c: reply_submit(comment=c, author=request.user, text=text),
        "Reply saved: it is sent in a moment, or once an admin approves it where replies wait.",
    )


@workspace_view(Action.EDIT)
@require_POST
def inbox_done(request: WorkspaceRequest, pk: int) -> HttpResponse:
    done = request.POST.get("done") == "1"
    return _act(
        request,
        pk,
        lambda c: comment_set_state(comment=c, done=done),
        "Marked done." if done else "Open again.",
    )


@workspace_view(Action.EDIT)
@require_POST
def inbox_assign(request: WorkspaceRequest, pk: int) -> HttpResponse:
    chosen = request.POST.get("assignee", "")
    person = User.objects.filter(pk=int(chosen)).first() if chosen.isdigit() else None
    return _act(
        request,
        pk,
        lambda c: comment_assign(comment=c, assignee=person),
        f"Assigned to {person.name or person.email}." if person else "Assigned to nobody.",
    )


@workspace_view(Action.PUBLISH)
@require_POST
def inbox_moderate(request: WorkspaceRequest, pk: int) -> HttpResponse:
    action = request.POST.get("action", "")
    return _act(
        request,
        pk,
        lambda c: comment_moderate(comment=c, action=action),
        "Asked the platform; the thread shows it once done.",
    )


def _reply(request: WorkspaceRequest, pk: int) -> Reply:
    return get_object_or_404(
        Reply.objects.for_workspace(request.workspace).select_related("comment"), pk=pk
    )


@workspace_view(Action.ADMIN)
@require_POST
def inbox_reply_decide(request: WorkspaceRequest, pk: int) -> HttpResponse:
    reply = _reply(request, pk)
    approve = request.POST.get("approve") == "1"
    return _act(
        request,
        reply.comment_id,
        lambda c: reply_decide(reply=reply, reviewer=request.user, approve=approve),
        "Approved: the reply is sent in a moment." if approve else "Reply rejected.",
    )


@workspace_view(Action.PUBLISH)
@require_POST
def inbox_reply_retry(request: WorkspaceRequest, pk: int) -> HttpResponse:
    reply = _reply(request, pk)
    return _act(
        request, reply.comment_id, lambda c: reply_retry(reply=reply), "Sending the reply again."
    )


@workspace_view(Action.PUBLISH)
@require_POST
def inbox_reply_found(request: WorkspaceRequest, pk: int) -> HttpResponse:
    reply = _reply(request, pk)
    url = request.POST.get("url", "").strip()
    return _act(
        request,
        reply.comment_id,
        lambda c: reply_mark_sent(reply=reply, url=url),
        "Recorded as sent: nothing was sent again.",
    )


@workspace_view(Action.ADMIN)
@require_POST
def inbox_settings_view(request: WorkspaceRequest) -> HttpResponse:
    held = request.POST.get("replies_need_approval") == "on"
    inbox_settings_update(workspace=request.workspace, replies_need_approval=held)
    messages.success(
        request,
        "Editors' replies now wait for an admin's approval."
        if held
        else "Editors' replies are sent at once.",
    )
    return redirect_to(request, reverse("inbox", args=[request.workspace.slug]))

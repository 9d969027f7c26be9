"""The approval workflow in the web app: the review queue (with the workspace's rule for
admins) and the steps taken from a post's page: submit, approve, ask for changes, put on
hold, comment. Each step posts the revision the person looked at; the services decide."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Prefetch, prefetch_related_objects
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import Action, can
from apps.approvals.models import Review, ReviewComment
from apps.approvals.rule import approval_required, approval_rule_set, is_approver
from apps.common.errors import DomainError
from apps.publications.models import Publication
from apps.publishing.services.reviews import (
    review_approve,
    review_comment,
    review_hold,
    review_request_changes,
    review_submit,
)
from apps.web.access import WorkspaceRequest, permits, workspace_view
from apps.web.views.common import redirect_to


def _publication(request: WorkspaceRequest, pk: int) -> Publication:
    return get_object_or_404(Publication.objects.for_workspace(request.workspace), pk=pk)


def _revision(request: WorkspaceRequest) -> int:
    try:
        return int(request.POST.get("revision", ""))
    except ValueError:
        return -1  # refused by the service as a stale revision


def _back(request: WorkspaceRequest, publication: Publication) -> HttpResponse:
    url = reverse("publication-detail", args=[request.workspace.slug, publication.pk])
    return redirect_to(request, url + "#review")


def _step(request: WorkspaceRequest, pk: int, do, done: str) -> HttpResponse:
    publication = _publication(request, pk)
    try:
        do(publication)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, done)
    return _back(request, publication)


@workspace_view(Action.VIEW)
@require_GET
def review_queue(request: WorkspaceRequest) -> HttpResponse:
    workspace = request.workspace
    state = request.GET.get("state") or Review.State.IN_REVIEW
    if state not in Review.State.values:
        state = Review.State.IN_REVIEW
    reviews = (
        Review.objects.for_workspace(workspace)
        .filter(state=state)
        .select_related("publication", "requested_by")
        .prefetch_related("publication__segments", "publication__renditions__social_account")
        .order_by("requested_at")[:200]
    )
    context = {
        "workspace": workspace,
        "section": "reviews",
        "reviews": reviews,
        "state": state,
        "states": Review.State.choices,
        "required": approval_required(workspace),
        "can_admin": can(request.user, workspace, Action.ADMIN),
    }
    return render(request, "web/reviews/queue.html", context)


@workspace_view(Action.ADMIN)
@require_POST
def review_rule_set(request: WorkspaceRequest) -> HttpResponse:
    required = request.POST.get("required") == "on"
    approval_rule_set(workspace=request.workspace, required=required, actor=request.user)
    messages.success(
        request,
        "Editors' posts now need an admin's approval before they are scheduled."
        if required
        else "Editors schedule their posts themselves again.",
    )
    return redirect_to(request, reverse("reviews", args=[request.workspace.slug]))


def _noted_step(request: WorkspaceRequest, pk: int, service, done: str) -> HttpResponse:
    """A step that moves the review (submit, approve, ask for changes), with its note."""
    return _step(
        request,
        pk,
        lambda p: service(
            publication=p,
            expected_revision=_revision(request),
            actor=request.user,
            note=request.POST.get("note", ""),
        ),
        done,
    )


@workspace_view(Action.EDIT)
@require_POST
def review_submit_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    done = "Submitted for review. The workspace's admins were told."
    return _noted_step(request, pk, review_submit, done)


@workspace_view(Action.PUBLISH)
@require_POST
def review_approve_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    return _noted_step(request, pk, review_approve, "Approved: the post is scheduled.")


@workspace_view(Action.PUBLISH)
@require_POST
def review_changes_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    done = "Sent back with your note. The author was told."
    return _noted_step(request, pk, review_request_changes, done)


@workspace_view(Action.PUBLISH)
@require_POST
def review_hold_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    done = "On hold: it stays off the schedule until it is approved. The author was told."
    return _noted_step(request, pk, review_hold, done)


@workspace_view(Action.EDIT)
@require_POST
def review_comment_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    return _step(
        request,
        pk,
        lambda p: review_comment(
            publication=p, actor=request.user, body=request.POST.get("body", "")
        ),
        "Comment added.",
    )


def review_panel_context(request, publication: Publication) -> dict:
    """What the review panel of a post's page shows and offers this person."""
    workspace = publication.workspace
    # The post's page read them with the publication; otherwise they are loaded here.
    prefetch_related_objects(
        [publication],
        Prefetch(
            "review",
            Review.objects.select_related("requested_by", "decided_by", "decided_via"),
        ),
        Prefetch(
            "review_comments",
            ReviewComment.objects.select_related("author", "portal_link").order_by(
                "created_at", "pk"
            ),
        ),
    )
    review = getattr(publication, "review", None)
    comments = publication.review_comments.all()
    user = request.user
    is_draft = publication.status == Publication.Status.DRAFT
    in_review = review is not None and review.state == Review.State.IN_REVIEW
    # Waiting for a decision: in review, or put on hold (approving releases it).
    decidable = in_review or (review is not None and review.state == Review.State.ON_HOLD)
    required = approval_required(workspace)
    return {
        "publication": publication,
        "workspace": workspace,
        "review": review,
        "comments": list(comments),
        "required": required,
        # This person's changes to the post would be refused (see
        # apps.publishing.services.approval): say so before they try.
        "bound": required and not is_draft and not is_approver(user, workspace),
        "can_submit": is_draft and not in_review and permits(request, workspace, Action.EDIT),
        "can_decide": decidable and is_approver(user, workspace),
        "can_comment": permits(request, workspace, Action.EDIT),
    }

"""Where an invitation link leads: accept it signed in as the verified user with the invited
address, or sign up through it when the address has no account yet."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from apps.accounts import invitations
from apps.accounts.http import AuthenticatedRequest
from apps.accounts.membership import MANAGERS
from apps.accounts.models import Invitation, User
from apps.common.errors import DomainError
from apps.web.access import post_only, verified_user_view
from apps.web.forms.auth import InvitedSignupForm
from apps.web.views.people import BACKEND

# A used, withdrawn or expired link is gone for good; the rest can change (sign in, verify).
GONE = {"INVITATION_USED", "INVITATION_REVOKED", "INVITATION_EXPIRED"}


def _destination(invitation: Invitation) -> str:
    if invitation.workspace is not None:
        return reverse("workspace-home", kwargs={"workspace_slug": invitation.workspace.slug})
    if invitation.role in MANAGERS:
        return reverse("organization-detail", kwargs={"org_slug": invitation.organization.slug})
    return reverse("home")


def _refused(request: HttpRequest, invitation: Invitation, exc: DomainError) -> HttpResponse:
    status = 410 if exc.code in GONE else exc.http_status
    context = {"invitation": invitation, "message": exc.message, "code": exc.code}
    return render(request, "web/invitations/refused.html", context, status=status)


def _accepted(request: HttpRequest, invitation: Invitation) -> HttpResponse:
    messages.success(request, f"Welcome to {invitation.place}: you are {invitation.role} there.")
    return redirect(_destination(invitation))


@require_http_methods(["GET", "POST"])
def invitation_view(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows the invitation (and the sign-up form for a new address); POST accepts it
    or signs up. Nothing is granted on GET: mail scanners open links too."""
    invitation = invitations.invitation_for_token(token)
    if invitation is None:
        return render(request, "web/invitations/invalid.html", status=404)
    user = request.user if request.user.is_authenticated else None
    problem = invitations.refusal(invitation, user)
    if problem is not None:
        return _refused(request, invitation, problem)
    context: dict = {"invitation": invitation, "path": request.get_full_path()}
    if user is not None:
        if request.method == "POST":
            try:
                invitations.invitation_accept(invitation=invitation, user=user)
            except DomainError as exc:
                return _refused(request, invitation, exc)
            return _accepted(request, invitation)
        return render(request, "web/invitations/accept.html", context)

    if User.objects.filter(email__iexact=invitation.email).exists():
        # The account may be someone else's, opened with this address: only its password
        # (or a reset, which proves the mailbox and replaces it) opens it.
        context["has_account"] = True
        return render(request, "web/invitations/accept.html", context)
    form = InvitedSignupForm(request.POST or None, email=invitation.email)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            new_user = invitations.invitation_sign_up(
                invitation=invitation,
                password=data["password"],
                name=data["name"],
                display_timezone=data["display_timezone"],
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            login(request, new_user, backend=BACKEND)
            return _accepted(request, invitation)
    context["form"] = form
    status = 400 if form.errors else 200
    return render(request, "web/invitations/accept.html", context, status=status)


@verified_user_view
@post_only("home")
def invitation_join(request: AuthenticatedRequest, pk: int) -> HttpResponse:
    """Accept one of the invitations listed for the signed-in, verified address."""
    invitation = get_object_or_404(invitations.pending_for(request.user), pk=pk)
    try:
        invitations.invitation_accept(invitation=invitation, user=request.user)
    except DomainError as exc:
        return _refused(request, invitation, exc)
    return _accepted(request, invitation)

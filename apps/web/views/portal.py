"""The client portal: a page opened by a client link (no account), where someone outside
the workspace sees the posts the link shares, each as it will go out, and approves them
or asks for changes with a note (``apps.approvals.portal``).

Every request is counted per IP address (CLIENT_PORTAL_RATE_LIMIT) before the token is
even read, so links cannot be guessed at speed. The page shows nothing else of the
workspace: no navigation, no member's name. It is never cached and sends a Referer only
to this site (its own forms need one for the CSRF check; a policy of none sends
``Origin: null``), so the link does not leak into other sites' logs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from apps.approvals.models import PortalLink
from apps.approvals.portal import (
    PortalLinkRefused,
    portal_link_open,
    portal_link_viewed,
    portal_publications,
)
from apps.common.errors import DomainError
from apps.publications.models import Publication
from apps.publishing.services.reviews import (
    review_approve,
    review_hold,
    review_request_changes,
)
from apps.security.client_ip import client_ip
from apps.security.ratelimit import parse_rate, rate_hit, too_many
from apps.web.portal_posts import portal_posts

PortalView = Callable[..., HttpResponse]
STALE = "This post changed while you were looking at it: see it again below, then decide."


def _private(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-store, private"
    response["Referrer-Policy"] = "same-origin"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


def _throttled(request: HttpRequest) -> HttpResponse | None:
    rate = parse_rate(settings.CLIENT_PORTAL_RATE_LIMIT)
    if rate is None:
        return None
    limit, period_s = rate
    key = f"portal:{client_ip(request)}"
    hits, retry_after = rate_hit(key=key, period_s=period_s, now=timezone.now())
    if hits <= limit:
        return None
    message = f"Too many requests. Try again in {retry_after} seconds."
    return too_many(request, retry_after_s=retry_after, message=message)


def portal_view(view: PortalView) -> PortalView:
    """Decorate a view taking (request, link, ...) from one taking (request, token, ...):
    rate limited, the link opened or refused (404 unknown, 410 expired or revoked)."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, token: str, *args, **kwargs) -> HttpResponse:
        refused = _throttled(request)
        if refused is not None:
            return refused
        try:
            link = portal_link_open(token)
        except PortalLinkRefused as exc:
            context = {"message": exc.message, "code": exc.code}
            page = render(request, "web/portal/refused.html", context, status=exc.http_status)
            return _private(page)
        return _private(view(request, link, *args, token=token, **kwargs))

    return wrapper


@require_GET
@portal_view
def portal_page(request: HttpRequest, link: PortalLink, *, token: str) -> HttpResponse:
    posts = portal_posts(link)
    portal_link_viewed(link)
    context = {
        "link": link,
        "token": token,
        "workspace_name": link.workspace.name,
        "posts": posts,
        "waiting": sum(1 for post in posts if post.can_decide),
        "read_only": not link.workspace.organization.is_active,
    }
    return render(request, "web/portal/page.html", context)


def _revision(request: HttpRequest) -> int:
    try:
        return int(request.POST.get("revision", ""))
    except ValueError:
        return -1  # refused by the service as a stale revision


def _decide(request: HttpRequest, link: PortalLink, publication: Publication) -> str:
    """Run the client's decision with the powers of the link's maker; returns what to
    tell them."""
    revision = _revision(request)
    note = request.POST.get("note", "")
    decision = request.POST.get("decision")
    if decision == "hold":
        review_hold(
            publication=publication,
            expected_revision=revision,
            actor=link.created_by,
            note=note,
            via=link,
        )
        return "On hold: it will not go out until it is approved."
    if decision == "approve":
        review_approve(
            publication=publication,
            expected_revision=revision,
            actor=link.created_by,
            note=note,
            via=link,
        )
        return "Approved: thank you. The post is scheduled as shown."
    review_request_changes(
        publication=publication,
        expected_revision=revision,
        actor=link.created_by,
        note=note,
        via=link,
    )
    return "Sent back with your note: the team will change it and share it again."


@require_POST
@portal_view
def portal_decide(request: HttpRequest, link: PortalLink, pk: int, *, token: str) -> HttpResponse:
    """Approve a post, ask for changes with a note, or put it on hold, at the revision the
    client saw."""
    publication = portal_publications(link).filter(pk=pk).first()
    if publication is None:
        raise Http404("No such post behind this link.")
    if not link.workspace.organization.is_active:
        messages.error(request, "Nothing can be approved here at the moment.")
    else:
        try:
            messages.success(request, _decide(request, link, publication))
        except DomainError as exc:
            messages.error(request, STALE if exc.code == "REVISION_CONFLICT" else exc.message)
    return redirect(reverse("portal", args=[token]) + f"#post-{publication.pk}")

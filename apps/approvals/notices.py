"""Emails of the approval workflow: a post waiting for review reaches the workspace's
admins; a decision reaches the person who asked. Links are built from SITE_URL. A mail
that cannot be sent is logged, never raised: the review already happened."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.urls import reverse

from apps.accounts.models import User
from apps.accounts.recipients import workspace_admin_emails
from apps.approvals.models import Review

logger = logging.getLogger(__name__)

# What a decision did, and what happens next, as the author's email says it.
VERDICTS: dict[str, str] = {"approved": "approved", "on_hold": "put on hold"}
NEXT_STEPS: dict[str, str] = {
    "approved": "It is scheduled",
    "on_hold": "It waits, off the schedule",
}


def _link(review: Review) -> str:
    path = reverse("publication-detail", args=[review.workspace.slug, review.publication_id])
    return settings.SITE_URL.rstrip("/") + path


def review_changed(review: Review, *, actor: User | None, note: str) -> None:
    link = review.decided_via if review.state != Review.State.IN_REVIEW else None
    if link is not None:
        who = f"{link.label} (through a client link)"
    else:
        who = (actor.name or actor.email) if actor else "An integration"
    actor_email = actor.email if actor else None
    said = f"\n\n{who} wrote:\n{note}" if note else ""
    workspace = review.workspace
    if review.state == Review.State.IN_REVIEW:
        recipients = [e for e in workspace_admin_emails(workspace) if e != actor_email]
        subject = f"Post waiting for your review in {workspace.name}"
        body = f"{who} asks you to review a post in {workspace.name}.{said}"
        action = "Approve it, or ask for changes"
    else:
        requester = review.requested_by
        recipients = [requester.email] if requester and requester.email != actor_email else []
        verdict = VERDICTS.get(review.state, "sent back")
        subject = f"Your post was {verdict} in {workspace.name}"
        body = f"{who} {verdict} your post in {workspace.name}.{said}"
        action = NEXT_STEPS.get(review.state, "Edit it")
    if not recipients:
        return
    try:
        send_mail(
            subject=subject[:200],
            message=f"{body}\n\n{action}: {_link(review)}\n",
            from_email=None,
            recipient_list=recipients,
        )
    except Exception:
        logger.exception("Could not send a review email.", extra={"review_id": review.pk})

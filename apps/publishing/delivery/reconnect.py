"""Ambiguous renditions whose check needs their account: an account that must be reconnected
cannot be asked whether the post exists, so the check waits for the reconnect (action
``reconnect``) and runs again as soon as the account is connected, instead of leaving the
question to a person for good."""

from __future__ import annotations

import logging

from django.db import transaction

from apps.accounts.models import SocialAccount
from apps.jobs.models import Job
from apps.jobs.services import holding_lease
from apps.providers.errors import Action
from apps.publishing.delivery.failures import enqueue_reconcile
from apps.publishing.locks import lock_rendition
from apps.renditions.models import Rendition

logger = logging.getLogger(__name__)

NOTE = "Reconnect the account: the check for the post runs again then."


def await_reconnect(job: Job, rendition: Rendition) -> None:
    """Park the ambiguous rendition until its account is reconnected."""
    with holding_lease(job):
        current = lock_rendition(rendition.pk)
        if not _is_ambiguous(current):
            return
        error = {**(current.last_error or {}), "action": str(Action.RECONNECT)}
        error["reconcile_note"] = NOTE
        error.pop("check_at", None)
        Rendition.objects.filter(pk=current.pk).update(last_error=error)
    logger.info("ambiguous rendition waits for a reconnect", extra={"rendition_id": rendition.pk})


def reconcile_after_reconnect(account: SocialAccount, **_payload) -> int:
    """Subscriber of ``account.connected``: check again every ambiguous rendition of the
    account that waited for it. Returns how many checks were scheduled."""
    if account.status != SocialAccount.Status.CONNECTED:
        return 0
    waiting = Rendition.objects.filter(
        social_account_id=account.pk,
        status=Rendition.Status.FAILED,
        ambiguous=True,
        last_error__action=str(Action.RECONNECT),
    ).values_list("pk", flat=True)
    scheduled = 0
    for rendition_id in list(waiting):
        with transaction.atomic():
            current = lock_rendition(rendition_id)
            if not _is_ambiguous(current):
                continue
            check_at = enqueue_reconcile(current)
            error = {**(current.last_error or {}), "action": str(Action.VERIFY)}
            error.pop("reconcile_note", None)
            if check_at is not None:
                error.update(action=str(Action.WAIT), check_at=check_at.isoformat())
                scheduled += 1
            Rendition.objects.filter(pk=current.pk).update(last_error=error)
    return scheduled


def _is_ambiguous(rendition: Rendition) -> bool:
    return rendition.status == Rendition.Status.FAILED and rendition.ambiguous

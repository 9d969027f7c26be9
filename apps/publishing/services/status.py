"""Keeping a publication's status equal to the aggregate of its renditions."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from apps.common import events
from apps.publications.models import Publication
from apps.publishing.status import RenditionState, aggregate_status
from apps.renditions.models import Rendition


def publication_refresh_status(publication: Publication) -> Publication:
    """Recompute and store the publication's status from its renditions (the rule is
    ``apps.publishing.status.aggregate_status``); returns the publication.

    Call it in the transaction that changed a rendition's status. It locks the
    publication row first, so two renditions finishing at once are serialized and the
    second sees the first's outcome; lock the publication before its renditions (the
    services' lock order) to stay clear of deadlocks.
    """
    with transaction.atomic():
        current = (
            Publication.objects.select_for_update()
            .filter(pk=publication.pk)
            .values_list("status", flat=True)
            .get()
        )
        rows = Rendition.objects.filter(publication_id=publication.pk).values_list(
            "status", "next_retry_at", "ambiguous"
        )
        states = [
            RenditionState(
                status=status,
                retry_pending=status == Rendition.Status.FAILED and bool(retry) and not ambiguous,
            )
            for status, retry, ambiguous in rows
        ]
        status = aggregate_status(states, current=current)
        if status != current:
            Publication.objects.filter(pk=publication.pk).update(
                status=status, updated_at=timezone.now()
            )
            events.emit(
                events.PUBLICATION_STATUS_CHANGED,
                publication=publication,
                previous=current,
                status=status,
            )
        publication.status = status
    return publication

"""The lock order every write of the publish flow follows: the publication row, then the
organization row (quotas), then rendition rows."""

from __future__ import annotations

from apps.publications.models import Publication
from apps.renditions.models import Rendition


def lock_rendition(rendition_id: int) -> Rendition:
    """Lock the publication, then the rendition (the services' lock order)."""
    publication_id = Rendition.objects.values_list("publication_id", flat=True).get(pk=rendition_id)
    Publication.objects.select_for_update().filter(pk=publication_id).first()
    return (
        Rendition.objects.select_for_update(of=("self",))
        .select_related("publication", "social_account", "workspace__organization")
        .get(pk=rendition_id)
    )

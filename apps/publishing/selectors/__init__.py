"""Reads about publications that several clients share. The read of a publication itself,
for every door, is ``publication_read``."""

from __future__ import annotations

from apps.providers.validation import Problem
from apps.publications.models import Publication
from apps.publishing.selectors.publication_read import (
    publication_detail,
    publication_page,
    publish_due_times,
    with_publication_read,
    with_publication_rows,
)
from apps.renditions.selectors import rendition_problems

__all__ = [
    "publication_detail",
    "publication_page",
    "publication_problems",
    "publish_due_times",
    "with_publication_read",
    "with_publication_rows",
]


def publication_problems(*, publication: Publication) -> list[Problem]:
    """Every catalog problem of every live rendition (cancelled and published ones are
    skipped), with paths under "destinations.N" in rendition order: what the composer
    shows before scheduling."""
    renditions = publication.renditions.select_related("social_account").order_by("pk")
    problems: list[Problem] = []
    for i, rendition in enumerate(renditions):
        if rendition.is_terminal:
            continue
        problems += [p.prefixed(f"destinations.{i}") for p in rendition_problems(rendition)]
    return problems

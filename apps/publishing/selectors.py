"""Reads about publications that several clients share."""

from __future__ import annotations

from apps.providers.validation import Problem
from apps.publications.models import Publication
from apps.renditions.selectors import rendition_problems


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

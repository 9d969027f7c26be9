"""POST /publications/validate: every problem of a publication body, created nowhere.

The body goes through the real ``publication_create`` (as a draft) inside a savepoint
that is always rolled back, so validation cannot drift from creation: the same input
checks, time rules, workspace references, reference key and quota. The draft's renditions
are then checked against the capability catalog (``publication_problems``), and a body
that asks for ``"status": "scheduled"`` also goes through the scheduling gate (a time in
the past, daily caps). Nothing is committed: no row, no job, no notification.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from apps.accounts.models import ApiToken
from apps.common.errors import DomainError
from apps.publications.models import Publication
from apps.publishing.selectors import publication_problems
from apps.publishing.services import publication_create, publication_update

Problem = dict[str, Any]


class _DryRun(Exception):
    """Raised to roll the savepoint back once the problems are known."""


def _number(value: Any) -> int | float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return None


def problems_from_error(exc: DomainError) -> list[Problem]:
    """A domain refusal as problems: one per message when its details are keyed by field
    path, else one for the whole refusal (at the field it names, if any)."""
    details = exc.details or {}
    by_path = details and all(
        isinstance(messages, list) and all(isinstance(m, str) for m in messages)
        for messages in details.values()
    )
    if by_path:
        return [
            {"path": path, "code": exc.code, "message": message, "limit": None, "actual": None}
            for path, messages in details.items()
            for message in messages
        ]
    path = details.get("field") or ("reference_key" if "reference_key" in details else "")
    return [
        {
            "path": str(path),
            "code": exc.code,
            "message": exc.message,
            "limit": _number(details.get("limit")),
            "actual": _number(details.get("used")),
        }
    ]


def publication_validate(*, token: ApiToken, data: dict) -> list[Problem]:
    """Every problem of a create body (already parsed by PublicationCreateSerializer)."""
    fields = dict(data)
    wants_schedule = fields.pop("status", Publication.Status.DRAFT) == Publication.Status.SCHEDULED
    problems: list[Problem] = []
    try:
        with transaction.atomic():
            publication = publication_create(
                workspace=token.workspace,
                author=token.created_by,
                status=Publication.Status.DRAFT,
                **fields,
            )
            problems = [p.as_dict() for p in publication_problems(publication=publication)]
            if wants_schedule and not problems:
                publication_update(
                    publication=publication,
                    expected_revision=publication.revision,
                    actor=token.created_by,
                    status=Publication.Status.SCHEDULED,
                )
            raise _DryRun
    except _DryRun:
        pass
    except DomainError as exc:
        problems += problems_from_error(exc)
    return problems

"""Checks shared by the publication services: gathering field errors, resolving times,
reference keys, and the scheduling gate every rendition passes before it becomes due."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import prefetch_related_objects

from apps.accounts.models import SocialAccount, Workspace
from apps.common.errors import Conflict, ValidationFailed
from apps.providers.catalog import get_capabilities
from apps.providers.text_counting import count_text
from apps.providers.validation import Problem
from apps.publications.inputs import DestinationInput, Errors, SegmentInput
from apps.publications.models import Publication
from apps.publications.scheduling import ScheduleError, check_not_in_past, get_zone
from apps.publications.scheduling import resolve_schedule as _resolve_schedule
from apps.publishing import quotas
from apps.publishing.delivery import enqueue
from apps.renditions.models import Rendition
from apps.renditions.selectors import rendition_problems

R = Rendition.Status
P = Publication.Status

TARGET_STATUSES = (P.DRAFT, P.SCHEDULED)


class FieldErrors:
    """Field errors gathered across a request and raised once. When every error came from
    checks sharing one specific code (SCHEDULE_IN_PAST...), that code is kept; otherwise
    the code is VALIDATION_ERROR."""

    def __init__(self) -> None:
        self.details: Errors = {}
        self._coded_paths: set[str] = set()
        self._codes: set[str] = set()

    def absorb(self, exc: ValidationFailed) -> None:
        for path, messages in exc.details.items():
            self.details.setdefault(path, []).extend(messages)
            self._coded_paths.add(path)
        self._codes.add(exc.code)

    def raise_if_any(self, message: str = "The publication is not valid.") -> None:
        if not self.details:
            return
        code = None
        if len(self._codes) == 1 and set(self.details) <= self._coded_paths:
            code = next(iter(self._codes))
        raise ValidationFailed(message, code=code, details=self.details)


def input_texts(
    segments: list[SegmentInput], destinations: list[DestinationInput]
) -> Iterator[str]:
    """Every text an input holds: its segments' and each destination's own."""
    yield from (seg.text for seg in segments)
    for dest in destinations:
        yield from (seg.text for seg in dest.segments or [])


def check_content_size(texts: Iterable[str]) -> None:
    """Refuse a publication whose texts (every segment's, with every destination's own)
    add up to more than PUBLICATION_MAX_CONTENT_CHARS characters (ValidationFailed
    PUBLICATION_TOO_LARGE): one request cannot make the database store megabytes."""
    limit = settings.PUBLICATION_MAX_CONTENT_CHARS
    total = sum(len(text) for text in texts)
    if total > limit:
        message = (
            f"The publication holds {total:,} characters of text (its segments and every "
            f"destination's own text together); at most {limit:,} are allowed."
        )
        raise ValidationFailed(
            message, code="PUBLICATION_TOO_LARGE", details={"segments": [message]}
        )


def check_first_comment(text: str, accounts: Iterable[SocialAccount]) -> None:
    """Refuse a first comment longer than a destination's platform takes under a post
    (ValidationFailed FIRST_COMMENT_TOO_LONG, counted as that platform counts). Platforms
    without first comments are not checked: their posts go out without it."""
    if not text:
        return
    problems = []
    for platform in sorted({account.platform for account in accounts}):
        caps = get_capabilities(platform)
        if not caps.supports_first_comment:
            continue
        length = count_text(text, caps.text_counter, url_length=caps.url_length)
        limit = caps.first_comment_limit or 0
        if length > limit:
            problems.append(
                f"{length:,} characters is too long for a first comment on {platform}: "
                f"at most {limit:,}."
            )
    if problems:
        raise ValidationFailed(
            problems[0], code="FIRST_COMMENT_TOO_LONG", details={"first_comment": problems}
        )


def parse_status(value: Any, errors: FieldErrors) -> str | None:
    if value not in TARGET_STATUSES:
        errors.details["status"] = ["Must be draft or scheduled."]
        return None
    return value


def resolve_time(
    *,
    scheduled_at: Any,
    local_time: Any,
    timezone: str | None,
    default_zone: str,
    now: datetime,
    errors: FieldErrors,
    prefix: str = "",
) -> tuple[datetime | None, str | None]:
    """(UTC instant or None, zone) for an optional schedule; errors are collected."""
    try:
        if scheduled_at is None and local_time is None:
            zone = timezone or default_zone
            get_zone(zone, field=f"{prefix}.timezone" if prefix else "timezone")
            return None, zone
        return _resolve_schedule(
            scheduled_at=scheduled_at,
            local_time=local_time,
            timezone=timezone or default_zone,
            now=now,
            field_prefix=prefix,
        )
    except ScheduleError as exc:
        errors.absorb(exc)
        return None, None


def destination_times(
    destinations: list[DestinationInput], *, default_zone: str, now: datetime, errors: FieldErrors
) -> dict[str, datetime | None]:
    """Each destination's own schedule (None: it follows the publication), by path."""
    times: dict[str, datetime | None] = {}
    for dest in destinations:
        if not dest.has_own_schedule:
            if dest.timezone is not None:
                try:
                    get_zone(dest.timezone, field=f"{dest.path}.timezone")
                except ScheduleError as exc:
                    errors.absorb(exc)
            times[dest.path] = None
            continue
        times[dest.path], _zone = resolve_time(
            scheduled_at=dest.scheduled_at,
            local_time=dest.local_time,
            timezone=dest.timezone,
            default_zone=default_zone,
            now=now,
            errors=errors,
            prefix=dest.path,
        )
    return times


def check_reference_key(
    workspace: Workspace, key: str | None, *, exclude_pk: int | None = None
) -> None:
    if key is None:
        return
    existing = Publication.objects.for_workspace(workspace).filter(reference_key=key)
    if exclude_pk is not None:
        existing = existing.exclude(pk=exclude_pk)
    found = existing.values_list("pk", flat=True).first()
    if found is not None:
        raise reference_key_exists(key, found)


def reference_key_exists(key: str, publication_id: int | None) -> Conflict:
    return Conflict(
        f"A publication with reference_key '{key}' already exists in this workspace.",
        code="REFERENCE_KEY_EXISTS",
        details={"reference_key": key, "publication_id": publication_id},
    )


def save_publication(publication: Publication) -> None:
    """full_clean and save; a reference_key taken by a concurrent writer is a Conflict."""
    publication.full_clean(exclude=["workspace", "author"], validate_constraints=False)
    key = publication.reference_key
    if key is None:
        # Without a key there is no race to report, so no savepoint to recover into.
        publication.save()
        return
    try:
        with transaction.atomic():
            publication.save()
    except IntegrityError as exc:
        if "publication_reference_key_unique" not in str(exc):
            raise
        found = (
            Publication.objects.for_workspace(publication.workspace)
            .filter(reference_key=key)
            .values_list("pk", flat=True)
            .first()
        )
        raise reference_key_exists(key, found) from None


def schedule_renditions(
    renditions: list[tuple[Rendition, str]],
    *,
    now: datetime,
    newly: set[int],
    moved: set[int],
) -> None:
    """The scheduling gate, then the transitions and delivery hooks.

    renditions: every rendition that is or becomes scheduled, with its field path
    ("destinations.N"); newly: those to move from draft to scheduled; moved: already
    scheduled ones whose effective time changed. Every problem of every one is reported
    at once (ValidationFailed); then daily caps (QuotaExceeded); only then is anything
    marked scheduled.
    """
    check_schedulable(renditions, now=now, changing=newly | moved)
    due = [r for r, _path in renditions if r.pk in newly | moved]
    for rendition in due:
        if rendition.pk in newly:
            rendition.mark_scheduled()
        enqueue.rendition_schedule_delivery(rendition)


def check_schedulable(
    renditions: list[tuple[Rendition, str]],
    *,
    now: datetime,
    changing: set[int],
) -> None:
    """The scheduling gate on saved renditions: every problem of every rendition against
    its platform and account (ValidationFailed, all at once), times in the past for those
    in ``changing`` (ids becoming due or moving), then the daily caps of those
    (QuotaExceeded). New publications pass the same gate on their content in memory
    (``create_pipeline``)."""
    errors = FieldErrors()
    # Their content in one query per table, read after any edit rewrote it.
    prefetch_related_objects([r for r, _path in renditions], "segments__media__media")
    for rendition, path in renditions:
        gate_rendition(
            errors,
            path=path,
            problems=rendition_problems(rendition),
            account=rendition.social_account,
            # No time yet means "now" (delivery runs it at once), never in the past.
            instant=rendition.effective_scheduled_at if rendition.pk in changing else None,
            own_time=rendition.scheduled_at is not None,
            now=now,
        )
    errors.raise_if_any("The publication cannot be scheduled as it is.")
    due = [r for r, _path in renditions if r.pk in changing]
    quotas.check_daily_caps(renditions=due, paths={r.pk: path for r, path in renditions})


def gate_rendition(
    errors: FieldErrors,
    *,
    path: str,
    problems: Iterable[Problem],
    account: SocialAccount,
    instant: datetime | None,
    own_time: bool,
    now: datetime,
) -> None:
    """One rendition through the scheduling gate, its problems gathered in errors at
    ``path`` ("destinations.N"): what the capability catalog refuses (``problems``), a
    disabled account, and a time more than the grace in the past (``instant``: when it
    publishes, None when it is not becoming due or moving; ``own_time``: the time is the
    destination's own, not the publication's)."""
    for problem in problems:
        errors.details.setdefault(f"{path}.{problem.path}", []).append(problem.message)
    if account.status == SocialAccount.Status.DISABLED:
        errors.details.setdefault(f"{path}.account", []).append("This account is disabled.")
    if instant is None:
        return
    try:
        check_not_in_past(
            instant, now=now, field=f"{path}.scheduled_at" if own_time else "scheduled_at"
        )
    except ScheduleError as exc:
        errors.absorb(exc)

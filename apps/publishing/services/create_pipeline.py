"""Creating publications: one pipeline, a batch at a time.

Every path that creates publications comes here: the API's single and bulk creates, MCP,
the web composer and CSV import, the series materializer and the queue's "Add to queue"
(through ``publication_create``, a batch of one, or ``publications_bulk_create``). Nothing
else writes publications, so every rule below holds on every path.

A batch runs parse → checks → write once, each item checked on its own:

1. parse: fields, times, destinations (no query; a top-level ``text`` is one segment);
2. approval: a scheduled item by someone whose posts need an admin's approval first is
   refused APPROVAL_REQUIRED (``apps.approvals.rule``): they save a draft and submit it;
3. the content cap (PUBLICATION_TOO_LARGE);
4. references: the accounts and media of every item, from this workspace only, in one
   query (NotFound otherwise); the first comment's length on those platforms;
5. the reference key: one already used is answered with its publication (``exists``, the
   bulk create's way, so an import run twice creates nothing twice) or refused
   REFERENCE_KEY_EXISTS (a single create); within a batch the first item takes it;
6. the scheduling gate, on the content in memory: the capability catalog, disabled
   accounts, times more than the grace in the past (``checks.gate_rendition``);
7. the organization's monthly quota and the accounts' daily caps, counted once for the
   batch under the organization's row lock, then item by item (an item counts those
   accepted before it).

Then the accepted items are written: the ids of every row of every table in one query,
every row in one statement (``content.new_publications_rows``), their publish jobs in one
insert, their status events in one outbox write. New renditions are written in their
final status (draft or scheduled): a row that does not exist yet has no earlier status.

The organization's lock serializes what must be counted or looked up exactly (the quota,
the caps, the reference keys). A batch taken all or nothing that names no reference key
(a single create) takes it last, after the write, where the caller allows
(``apps.common.deferred_checks``), so concurrent creates of one organization queue only
for the count and the COMMIT; a refusal there rolls everything back. Any other batch
takes it first, so the keys it reads stay free and its counts hold while it decides item
by item.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone as django_timezone

from apps.accounts.models import Organization, SocialAccount, User, Workspace
from apps.approvals.rule import ApprovalRequired, check_may_schedule
from apps.common import deferred_checks, events
from apps.common.errors import DomainError, ValidationFailed
from apps.jobs.services import JobSpec, job_enqueue_many
from apps.providers.validation import MediaInfo, validate_rendition
from apps.publications import inputs
from apps.publications.inputs import DestinationInput, SegmentInput
from apps.publications.models import MediaAsset, Publication
from apps.publishing import quotas
from apps.publishing.delivery.enqueue import PUBLISH_JOB, publish_dedupe_key
from apps.publishing.services import content as _content
from apps.publishing.services.checks import (
    FieldErrors,
    check_content_size,
    check_first_comment,
    destination_times,
    gate_rendition,
    input_texts,
    parse_status,
    reference_key_exists,
    resolve_time,
)
from apps.publishing.status import RenditionState, aggregate_status
from apps.renditions.models import Rendition
from apps.renditions.selectors import account_text_limit

P = Publication.Status
R = Rendition.Status

ITEM_KEYS = frozenset(
    {
        "text",
        "segments",
        "destinations",
        "scheduled_at",
        "local_time",
        "timezone",
        "status",
        "reference_key",
        "first_comment",
    }
)


class OutcomeStatus:
    CREATED = "created"
    EXISTS = "exists"
    ERROR = "error"


@dataclass
class Outcome:
    """What happened to one item: created (publication is the new one), exists
    (publication already held the reference_key) or error (error says why)."""

    index: int
    reference_key: str | None
    status: str
    publication: Publication | None = None
    error: DomainError | None = None


@dataclass
class _Item:
    """One item parsed, then built and checked, ready to write."""

    index: int
    key: str | None
    target: str
    segments: list[SegmentInput]
    destinations: list[DestinationInput]
    scheduled_at: datetime | None
    zone: str
    times: dict[str, datetime | None]
    first_comment: str
    publication: Publication
    renditions: list[Rendition] = field(default_factory=list)
    contents: list[_content.Content] = field(default_factory=list)

    def publish_at(self, own_time: datetime | None) -> datetime:
        """When a destination of this scheduled item publishes: its own time, else the
        item's (now when none was given)."""
        instant = own_time or self.scheduled_at
        assert instant is not None, "a scheduled item always has a time"
        return instant


def create_publications(
    *,
    workspace: Workspace,
    author: User | None,
    items: Sequence[Any],
    existing_keys_answer: bool,
    all_or_nothing: bool,
    keep_rows: bool = False,
) -> list[Outcome]:
    """Create one publication per item (each as ``publication_create`` takes its
    arguments, a top-level ``text`` being shorthand for one segment); one outcome per
    item, in order. Run it inside a transaction.

    existing_keys_answer: an item whose reference_key is already used is answered
    ``exists`` with that publication; False: refused REFERENCE_KEY_EXISTS.
    all_or_nothing: the first refusal is raised (nothing is written); False: a refused
    item is an ``error`` outcome and the others go on.
    keep_rows: the publications come back with their relations cached as written (see
    ``content.new_publications_rows``).
    """
    now = django_timezone.now()
    raw_keys = [_raw_key(raw) for raw in items]
    lock_first = not all_or_nothing or any(key is not None for key in raw_keys)
    organization = quotas.lock_organization(workspace) if lock_first else None
    existing = _existing_keys(workspace, {key for key in raw_keys if key is not None})
    outcomes = [Outcome(index, key, OutcomeStatus.CREATED) for index, key in enumerate(raw_keys)]

    def refuse(item_index: int, exc: DomainError) -> None:
        if all_or_nothing:
            raise exc
        outcomes[item_index].status = OutcomeStatus.ERROR
        outcomes[item_index].error = exc

    parsed = _parse_all(
        items,
        raw_keys,
        existing if existing_keys_answer else {},
        outcomes,
        refuse,
        workspace=workspace,
        author=author,
        now=now,
    )
    candidates, media, repeats = _checked(
        parsed,
        workspace=workspace,
        author=author,
        existing=existing,
        refuse=refuse,
        now=now,
    )
    accepted = (
        _within_quotas(candidates, organization, refuse, now=now)
        if organization is not None
        else candidates
    )
    written = _write(accepted, workspace=workspace, media=media, keep_rows=keep_rows)
    for item in accepted:
        outcomes[item.index].publication = item.publication
    _answer_repeats(outcomes, repeats)
    if organization is None and accepted:

        def check_quotas() -> None:
            # Counted after the lock, each count sees every create of the organization
            # committed before it (and leaves out the rows written above); a refusal
            # rolls back all of it.
            usage = _Usage(quotas.lock_organization(workspace), now, accepted, written)
            for item in accepted:
                usage.check(item)
                usage.take(item)

        # Now, or as late as the caller's transaction allows.
        deferred_checks.run_last(check_quotas)
    return outcomes


def _parse_all(
    items: Sequence[Any],
    raw_keys: list[str | None],
    existing: dict[str, Publication],
    outcomes: list[Outcome],
    refuse: Callable[[int, DomainError], None],
    *,
    workspace: Workspace,
    author: User | None,
    now: datetime,
) -> list[_Item]:
    """Each item parsed; one whose key already names a publication (``existing``) is
    answered ``exists`` before anything else, so running an import again after its times
    have passed still answers so."""
    parsed: list[_Item] = []
    for index, raw in enumerate(items):
        key = raw_keys[index]
        if key is not None and key in existing:
            outcomes[index].status = OutcomeStatus.EXISTS
            outcomes[index].publication = existing[key]
            continue
        try:
            parsed.append(_parse(raw, index=index, workspace=workspace, author=author, now=now))
        except DomainError as exc:
            refuse(index, exc)
    return parsed


def _within_quotas(
    candidates: list[_Item],
    organization: Organization,
    refuse: Callable[[int, DomainError], None],
    *,
    now: datetime,
) -> list[_Item]:
    """The candidates the organization's monthly quota and the accounts' daily caps still
    admit, in order; each one refused is answered so."""
    usage = _Usage(organization, now, candidates)
    accepted = []
    for item in candidates:
        try:
            usage.check(item)
        except DomainError as exc:
            refuse(item.index, exc)
            continue
        usage.take(item)
        accepted.append(item)
    return accepted


def _answer_repeats(outcomes: list[Outcome], repeats: list[tuple[int, _Item]]) -> None:
    """A key repeated within the batch: the first item with it answers for both."""
    for repeat, first in repeats:
        outcomes[repeat].status = outcomes[first.index].status
        outcomes[repeat].publication = outcomes[first.index].publication
        outcomes[repeat].error = outcomes[first.index].error
        if outcomes[repeat].status == OutcomeStatus.CREATED:
            outcomes[repeat].status = OutcomeStatus.EXISTS


def _raw_key(raw: Any) -> str | None:
    """The item's reference_key as it would be stored (None if absent or not valid; an
    invalid one is reported when the item is parsed)."""
    if not isinstance(raw, Mapping):
        return None
    return inputs.parse_reference_key(raw.get("reference_key"), errors={})


def _existing_keys(workspace: Workspace, keys: set[str]) -> dict[str, Publication]:
    if not keys:
        return {}
    found = Publication.objects.for_workspace(workspace).filter(reference_key__in=keys)
    # Every row found has one of the keys; the guard only tells the type checker.
    return {p.reference_key: p for p in found if p.reference_key is not None}


# --- parse ----------------------------------------------------------------------------------


def _parse(
    raw: Any, *, index: int, workspace: Workspace, author: User | None, now: datetime
) -> _Item:
    """The item read and its times resolved, without a query; ValidationFailed with every
    problem by field path (or the one specific code when that is the only problem)."""
    if not isinstance(raw, Mapping):
        raise ValidationFailed(
            "Each item must be an object, like the body of POST /publications.",
            details={"": ["Must be an object."]},
        )
    errors = FieldErrors()
    for name in sorted(set(raw) - ITEM_KEYS):
        errors.details[name] = ["Unknown field."]
    segments = raw.get("segments")
    if raw.get("text") is not None:
        if segments is not None:
            errors.details["text"] = ["Give text or segments, not both."]
        segments = [{"text": raw["text"]}]
    target = parse_status(raw.get("status", P.DRAFT), errors)
    seg_inputs = inputs.parse_segments(segments, path="segments", errors=errors.details)
    dest_inputs = inputs.parse_destinations(raw.get("destinations"), errors=errors.details)
    key = inputs.parse_reference_key(raw.get("reference_key"), errors=errors.details)
    comment = inputs.parse_first_comment(raw.get("first_comment"), errors=errors.details)
    if target == P.SCHEDULED and not dest_inputs and "destinations" not in errors.details:
        errors.details["destinations"] = ["Choose at least one destination to schedule."]
    pub_time, zone = resolve_time(
        scheduled_at=raw.get("scheduled_at"),
        local_time=raw.get("local_time"),
        timezone=raw.get("timezone"),
        default_zone=workspace.default_timezone,
        now=now,
        errors=errors,
    )
    times = destination_times(
        dest_inputs, default_zone=zone or workspace.default_timezone, now=now, errors=errors
    )
    errors.raise_if_any()
    assert target is not None and zone is not None, (
        "parse_status and resolve_time leave a value out only with an error, raised above"
    )
    if target == P.SCHEDULED and pub_time is None:
        pub_time = now  # scheduled without a time: publish now
    publication = Publication(
        workspace=workspace,
        author=author,
        status=P.DRAFT,  # the aggregate of its renditions, set once they are built
        scheduled_at=pub_time,
        timezone=zone,
        reference_key=key,
        first_comment=comment,
    )
    # The zone was checked by resolve_time; the field's own validator lists every zone on
    # disk (milliseconds an item).
    _full_clean(publication, exclude=["workspace", "author", "timezone"], prefix="")
    return _Item(
        index=index,
        key=key,
        target=target,
        segments=seg_inputs,
        destinations=dest_inputs,
        scheduled_at=pub_time,
        zone=zone,
        times=times,
        first_comment=comment,
        publication=publication,
    )


def _full_clean(obj: Any, *, exclude: list[str], prefix: str) -> None:
    """obj.full_clean without its uniqueness and constraint queries; a refusal is
    ValidationFailed by field path."""
    try:
        obj.full_clean(exclude=exclude, validate_unique=False, validate_constraints=False)
    except DjangoValidationError as exc:
        raise ValidationFailed(
            "The publication is not valid.",
            details={f"{prefix}{name}": msgs for name, msgs in exc.message_dict.items()},
        ) from None


# --- checks ---------------------------------------------------------------------------------


def _checked(
    parsed: list[_Item],
    *,
    workspace: Workspace,
    author: User | None,
    existing: dict[str, Publication],
    refuse: Callable[[int, DomainError], None],
    now: datetime,
) -> tuple[list[_Item], dict[int, MediaAsset], list[tuple[int, _Item]]]:
    """The items that pass approval, the content cap, their references, reference keys
    and the scheduling gate, built (renditions and their content); the others refused.
    Also the media they name, and the items repeating a key taken earlier in the batch
    (the index of each, with the item that took it)."""
    approval = _approval_refusal(workspace, author, parsed)
    passing = []
    for item in parsed:
        try:
            if approval is not None and item.target == P.SCHEDULED:
                raise approval
            check_content_size(input_texts(item.segments, item.destinations))
        except DomainError as exc:
            refuse(item.index, exc)
            continue
        passing.append(item)

    accounts, media = _content.read_references(
        workspace,
        account_ids={dest.account_id for item in passing for dest in item.destinations},
        media_ids={
            ref.media_id
            for item in passing
            for ref in _content.media_refs(item.segments, item.destinations)
        },
    )
    checked: list[_Item] = []
    claimed: dict[str, _Item] = {}  # reference_key -> the item that takes it in this batch
    repeats: list[tuple[int, _Item]] = []
    for item in passing:
        if item.key is not None and item.key in claimed:
            repeats.append((item.index, claimed[item.key]))
            continue
        try:
            missing = _content.missing_references(item.segments, item.destinations, accounts, media)
            if missing is not None:
                raise missing
            check_first_comment(
                item.first_comment, [accounts[d.account_id] for d in item.destinations]
            )
            if item.key is not None and item.key in existing:
                raise reference_key_exists(item.key, existing[item.key].pk)
            _build(item, accounts=accounts, media=media)
            if item.target == P.SCHEDULED:
                _gate(item, media=media, now=now)
        except DomainError as exc:
            refuse(item.index, exc)
            continue
        if item.key is not None:
            claimed[item.key] = item
        checked.append(item)
    return checked, media, repeats


def _approval_refusal(
    workspace: Workspace, author: User | None, items: list[_Item]
) -> ApprovalRequired | None:
    """The refusal every scheduled item of the batch gets when the author's posts need an
    admin's approval first (asked once for the batch, only if one is scheduled)."""
    if not any(item.target == P.SCHEDULED for item in items):
        return None
    try:
        check_may_schedule(workspace, author)
    except ApprovalRequired as exc:
        return exc
    return None


def _build(
    item: _Item, *, accounts: dict[int, SocialAccount], media: dict[int, MediaAsset]
) -> None:
    """The item's renditions (unsaved, in their final status) and their content."""
    source = _content.input_content(item.segments, media)
    status = R.SCHEDULED if item.target == P.SCHEDULED else R.DRAFT
    for dest in item.destinations:
        try:
            rendition = _content.new_rendition(
                publication=item.publication,
                account=accounts[dest.account_id],
                destination=dest,
                scheduled_at=item.times[dest.path],
            )
        except DjangoValidationError as exc:
            raise ValidationFailed(
                "The publication is not valid.",
                details={f"{dest.path}.{name}": msgs for name, msgs in exc.message_dict.items()},
            ) from None
        rendition.status = status
        item.renditions.append(rendition)
        item.contents.append(
            _content.input_content(dest.segments, media) if dest.segments else source
        )
    item.publication.status = aggregate_status(
        [RenditionState(status=r.status) for r in item.renditions], current=P.DRAFT
    )


def _gate(item: _Item, *, media: dict[int, MediaAsset], now: datetime) -> None:
    """The scheduling gate edits pass on saved rows (``checks.check_schedulable``), on the
    item's content in memory: every problem of every destination at once."""
    errors = FieldErrors()
    for rendition, content, dest in zip(
        item.renditions, item.contents, item.destinations, strict=True
    ):
        gate_rendition(
            errors,
            path=dest.path,
            problems=validate_rendition(
                rendition.platform,
                [text for text, _media in content],
                rendition.settings,
                _media_infos(content, media),
                text_limit=account_text_limit(rendition.social_account),
            ),
            account=rendition.social_account,
            instant=item.publish_at(rendition.scheduled_at),
            own_time=rendition.scheduled_at is not None,
            now=now,
        )
    errors.raise_if_any("The publication cannot be scheduled as it is.")


def _media_infos(content: _content.Content, assets: dict[int, MediaAsset]) -> list[list[MediaInfo]]:
    return [
        [
            MediaInfo(
                kind=assets[media_id].kind,
                mime_type=assets[media_id].mime_type,
                size_bytes=assets[media_id].size_bytes,
                width=assets[media_id].width,
                height=assets[media_id].height,
                duration_s=assets[media_id].duration_s,
                alt_text=alt,
            )
            for media_id, alt in items
        ]
        for _text, items in content
    ]


class _Usage:
    """The organization's monthly quota and its accounts' daily caps: what the database
    holds, counted once for the batch (call under the organization's lock), plus what the
    batch took so far. ``written``: rows of the batch already inserted, left out of the
    counts."""

    def __init__(
        self,
        organization: Organization,
        now: datetime,
        items: list[_Item],
        written: _content.NewRows | None = None,
    ) -> None:
        self.organization = organization
        self.now = now
        month = quotas.month_usage(organization, now)
        if written is not None:
            month = month.exclude(pk__in=[p.pk for p in written.publications])
        self.month_used = month.count()
        self.caps: dict[int, int] = {}
        for item in items:
            if item.target != P.SCHEDULED:
                continue
            for rendition in item.renditions:
                cap = quotas.daily_cap(rendition)
                if cap is not None:
                    self.caps[rendition.social_account_id] = cap
        self.day_used: Counter[tuple[int, date]] = Counter()
        if self.caps:
            self._count_days(items, written)

    def _count_days(self, items: list[_Item], written: _content.NewRows | None) -> None:
        """What each capped account holds on the UTC days the items publish, in one
        grouped count."""
        days = [
            item.publish_at(r.scheduled_at)
            for item in items
            if item.target == P.SCHEDULED
            for r in item.renditions
            if r.social_account_id in self.caps
        ]
        start = quotas.day_bounds(min(days))[0]
        end = quotas.day_bounds(max(days))[1]
        held = (
            Rendition.objects.with_effective_scheduled_at()
            .filter(quotas.COUNTS_TOWARD_DAILY_CAP)
            .filter(social_account_id__in=self.caps, effective_at__gte=start, effective_at__lt=end)
        )
        if written is not None:
            held = held.exclude(pk__in=[r.pk for r in written.renditions])
        rows = (
            held.annotate(day=TruncDate("effective_at", tzinfo=UTC))
            .values("social_account_id", "day")
            .annotate(n=Count("id"))
        )
        for row in rows:
            self.day_used[(row["social_account_id"], row["day"])] = row["n"]

    def _days(self, item: _Item) -> list[tuple[Rendition, str, tuple[int, date]]]:
        if item.target != P.SCHEDULED:
            return []
        return [
            (r, dest.path, (r.social_account_id, _utc_day(item.publish_at(r.scheduled_at))))
            for r, dest in zip(item.renditions, item.destinations, strict=True)
            if r.social_account_id in self.caps
        ]

    def check(self, item: _Item) -> None:
        """QuotaExceeded MONTHLY_QUOTA_EXCEEDED or DAILY_CAP_EXCEEDED if the item does not
        fit beside what is counted."""
        quotas.check_monthly_quota(
            organization=self.organization, now=self.now, used=self.month_used
        )
        keyed = self._days(item)
        wanted = Counter(key for _r, _path, key in keyed)
        for rendition, path, key in keyed:
            cap = self.caps[key[0]]
            used = self.day_used[key]
            if used + wanted[key] > cap:
                raise quotas.daily_cap_exceeded(
                    account=rendition.social_account, used=used, cap=cap, day=key[1], path=path
                )

    def take(self, item: _Item) -> None:
        self.month_used += 1
        for _rendition, _path, key in self._days(item):
            self.day_used[key] += 1


def _utc_day(instant: datetime) -> date:
    return instant.astimezone(UTC).date()


# --- write ----------------------------------------------------------------------------------


def _write(
    items: list[_Item],
    *,
    workspace: Workspace,
    media: dict[int, MediaAsset],
    keep_rows: bool,
) -> _content.NewRows:
    """Insert the accepted items: their ids in one query, their rows in one statement,
    their publish jobs in one insert, their status events in one outbox write."""
    if not items:
        return _content.NewRows()
    new = _content.new_publications_rows(
        [
            _content.NewPublication(item.publication, item.segments, item.renditions, item.contents)
            for item in items
        ],
        media,
        cache=keep_rows,
    )
    try:
        new.insert()
    except IntegrityError as exc:
        # Only a writer that skipped the organization lock can take a key meanwhile.
        if "publication_reference_key_unique" not in str(exc):
            raise
        raise reference_key_exists(next((i.key for i in items if i.key), ""), None) from None
    # Their dedupe keys are new, so none can be taken.
    jobs = [
        JobSpec(
            type=PUBLISH_JOB,
            payload={"rendition_id": r.pk},
            organization_id=workspace.organization_id,
            workspace_id=workspace.pk,
            run_at=r.effective_scheduled_at,
            dedupe_key=publish_dedupe_key(r.pk),
            lane=r.platform,
        )
        for r in new.renditions
        if r.status == R.SCHEDULED
    ]
    if jobs:
        job_enqueue_many(jobs)
    changed = [
        {"publication": p, "previous": P.DRAFT, "status": p.status}
        for p in new.publications
        if p.status != P.DRAFT
    ]
    if changed:
        # emit_many: the outbox takes them in one savepoint.
        events.emit_many(events.PUBLICATION_STATUS_CHANGED, changed)
    return new

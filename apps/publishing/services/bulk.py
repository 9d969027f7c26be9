"""Creating many publications at once (the API's bulk endpoint, the web's CSV import).

Each item is read exactly as ``publication_create`` reads one (same fields, same checks,
same error codes), plus: an item whose ``reference_key`` already exists in the workspace is
answered with that publication (``exists``) instead of REFERENCE_KEY_EXISTS, so running an
import again creates nothing twice. One bad item never blocks the others.

The work is done in phases so that 500 items cost a handful of statements, not 500 times
the single create's:

1. every item is parsed and its times resolved, without touching the database;
2. the accounts and media of all items are loaded with one query each;
3. with the organization row locked (the lock ``publication_create`` takes, so the two
   never race for the last unit of quota or for a reference_key), existing reference keys
   are read with one query, the monthly quota with one count and the daily caps with one
   grouped count; then each item is checked in order, counting the items accepted before
   it in the same call;
4. the accepted items are written with one ``bulk_create`` per table, and their publish
   jobs with one insert.

New renditions are written in their final status (draft or scheduled) rather than moved
there one by one: a row that does not exist yet has no earlier status to guard.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone as django_timezone

from apps.accounts.models import Organization, SocialAccount, User, Workspace
from apps.common import events, table_stats
from apps.common.errors import DomainError, NotFound, QuotaExceeded, ValidationFailed
from apps.jobs.models import Job
from apps.jobs.services import JobSpec, job_enqueue_many
from apps.providers.catalog import UnknownPlatform, get_capabilities
from apps.providers.validation import MediaInfo, validate_rendition
from apps.publications import inputs
from apps.publications.inputs import DestinationInput, SegmentInput
from apps.publications.models import MediaAsset, Publication, PublicationSegment, SegmentMedia
from apps.publications.scheduling import ScheduleError, check_not_in_past
from apps.publishing import quotas
from apps.publishing.delivery.enqueue import PUBLISH_JOB, publish_dedupe_key
from apps.publishing.services.checks import (
    FieldErrors,
    check_content_size,
    check_first_comment,
    destination_times,
    input_texts,
    parse_status,
    resolve_time,
)
from apps.publishing.status import RenditionState, aggregate_status
from apps.renditions.models import Rendition, RenditionMedia, RenditionSegment
from apps.renditions.selectors import account_text_limit

P = Publication.Status
R = Rendition.Status

MAX_BULK_ITEMS = 500
# The tables a bulk create writes (their statistics are refreshed as they grow).
WRITTEN_MODELS = (
    Publication,
    PublicationSegment,
    SegmentMedia,
    Rendition,
    RenditionSegment,
    RenditionMedia,
    Job,
)
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

# (text, ((media id, alt text), ...)) per segment, as the renditions store it.
Content = tuple[tuple[str, tuple[tuple[int, str], ...]], ...]


class BulkStatus:
    CREATED = "created"
    EXISTS = "exists"
    ERROR = "error"


@dataclass
class BulkOutcome:
    """What happened to one item: created (publication is the new one), exists
    (publication already held the reference_key) or error (error says why)."""

    index: int
    reference_key: str | None
    status: str
    publication: Publication | None = None
    error: DomainError | None = None


@dataclass
class _Item:
    """One item parsed and checked, ready to write."""

    index: int
    key: str | None
    target: str
    segments: list[SegmentInput]
    destinations: list[DestinationInput]
    scheduled_at: datetime | None
    zone: str
    times: dict[str, datetime | None]
    first_comment: str = ""
    renditions: list[Rendition] = field(default_factory=list)
    contents: list[Content] = field(default_factory=list)

    def publish_at(self, own_time: datetime | None) -> datetime:
        """When a destination of this scheduled item publishes: its own time, else the item's."""
        instant = own_time or self.scheduled_at
        assert instant is not None, "a scheduled item always has a time (now when none was given)"
        return instant


def publications_bulk_create(
    *, workspace: Workspace, author: User | None, items: list[Any]
) -> list[BulkOutcome]:
    """Create one publication per item (each item as ``publication_create`` takes it, a
    top-level ``text`` being shorthand for one segment), in one transaction; returns one
    outcome per item, in order.

    Per-item errors are the single create's: ValidationFailed (details by field path),
    NotFound for accounts or media not in the workspace, QuotaExceeded
    MONTHLY_QUOTA_EXCEEDED or DAILY_CAP_EXCEEDED. More than MAX_BULK_ITEMS items is a
    ValidationFailed TOO_MANY_ITEMS for the whole call, and nothing is created.
    """
    if len(items) > MAX_BULK_ITEMS:
        raise ValidationFailed(
            f"At most {MAX_BULK_ITEMS} items a request; this one has {len(items)}.",
            code="TOO_MANY_ITEMS",
            details={"items": [f"At most {MAX_BULK_ITEMS} items."]},
        )
    with transaction.atomic():
        outcomes = _create(workspace=workspace, author=author, items=items)
        # Once committed: statistics that still describe the tables as small make every
        # later import's foreign-key checks scan them whole (apps.common.table_stats).
        transaction.on_commit(lambda: table_stats.analyze_stale(WRITTEN_MODELS), robust=True)
        return outcomes


def _create(*, workspace: Workspace, author: User | None, items: list[Any]) -> list[BulkOutcome]:
    now = django_timezone.now()
    # Locked first: the reference keys read below stay free until this transaction ends.
    organization = quotas.lock_organization(workspace)
    keys = [_raw_key(raw) for raw in items]
    existing = _existing_keys(workspace, {key for key in keys if key is not None})
    outcomes: list[BulkOutcome] = []
    parsed: list[_Item] = []
    for index, (raw, key) in enumerate(zip(items, keys, strict=True)):
        if key is not None and key in existing:
            # Checked before anything else, so re-running an import whose times have
            # passed since still answers "exists".
            outcomes.append(BulkOutcome(index, key, BulkStatus.EXISTS, existing[key]))
            continue
        try:
            parsed.append(_parse(raw, index=index, workspace=workspace, now=now))
        except DomainError as exc:
            outcomes.append(BulkOutcome(index, key, BulkStatus.ERROR, error=exc))
            continue
        outcomes.append(BulkOutcome(index, key, BulkStatus.CREATED))

    accounts, media = _load_references(workspace, parsed)
    quota = _MonthlyQuota(organization, now)
    caps = _DailyCaps(parsed, accounts)
    accepted: list[_Item] = []
    claimed: dict[str, _Item] = {}  # reference_key -> the item that takes it in this call
    repeats: list[tuple[BulkOutcome, _Item]] = []  # (outcome, the item that claimed its key)
    for item in parsed:
        outcome = outcomes[item.index]
        if item.key is not None and item.key in claimed:
            # A key repeated within the call: the first item with it answers for both.
            outcome.status = BulkStatus.EXISTS
            outcome.error = None
            repeats.append((outcome, claimed[item.key]))
            continue
        try:
            _build_renditions(item, workspace=workspace, accounts=accounts, media=media)
            quota.check()
            if item.target == P.SCHEDULED:
                _check_schedulable(item, media=media, now=now)
                caps.check(item)
        except DomainError as exc:
            outcome.status = BulkStatus.ERROR
            outcome.error = exc
            continue
        quota.take()
        caps.take(item)
        if item.key is not None:
            claimed[item.key] = item
        accepted.append(item)

    publications = _write(accepted, workspace=workspace, author=author)
    for item, publication in zip(accepted, publications, strict=True):
        outcomes[item.index].publication = publication
    for outcome, first in repeats:
        outcome.publication = outcomes[first.index].publication
    return outcomes


def _raw_key(raw: Any) -> str | None:
    """The item's reference_key as publication_create would store it (None if absent or
    not valid; an invalid one is reported when the item is parsed)."""
    if not isinstance(raw, dict):
        return None
    return inputs.parse_reference_key(raw.get("reference_key"), errors={})


# --- phase 1: parse -------------------------------------------------------------------------


def _parse(raw: Any, *, index: int, workspace: Workspace, now: datetime) -> _Item:
    """The item read as publication_create reads its arguments; ValidationFailed if not."""
    if not isinstance(raw, dict):
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
    check_content_size(input_texts(seg_inputs, dest_inputs))
    assert target is not None and zone is not None, (
        "parse_status and resolve_time leave a value out only with an error, raised above"
    )
    if target == P.SCHEDULED and pub_time is None:
        pub_time = now  # scheduled without a time: publish now
    item = _Item(
        index=index,
        key=key,
        target=target,
        segments=seg_inputs,
        destinations=dest_inputs,
        scheduled_at=pub_time,
        zone=zone,
        times=times,
        first_comment=comment,
    )
    # The zone was checked by resolve_time; the field's own validator lists every zone on
    # disk (tens of milliseconds), which would dominate a large import.
    _publication(item, workspace=workspace, author=None).full_clean(
        exclude=["workspace", "author", "timezone"],
        validate_unique=False,
        validate_constraints=False,
    )
    return item


def _publication(item: _Item, *, workspace: Workspace, author: User | None) -> Publication:
    return Publication(
        workspace=workspace,
        author=author,
        status=P.DRAFT,  # the aggregate of its renditions, set when written
        scheduled_at=item.scheduled_at,
        timezone=item.zone,
        reference_key=item.key,
        first_comment=item.first_comment,
    )


# --- phase 2: references --------------------------------------------------------------------


def _media_refs(item: _Item) -> list[inputs.MediaRef]:
    refs = [ref for seg in item.segments for ref in seg.media]
    for dest in item.destinations:
        refs += [ref for seg in dest.segments or [] for ref in seg.media]
    return refs


def _load_references(
    workspace: Workspace, items: list[_Item]
) -> tuple[dict[int, SocialAccount], dict[int, MediaAsset]]:
    """Every account and media asset the items name, from this workspace only."""
    account_ids = {dest.account_id for item in items for dest in item.destinations}
    media_ids = {ref.media_id for item in items for ref in _media_refs(item)}
    accounts = {
        account.pk: account
        for account in SocialAccount.objects.for_workspace(workspace).filter(pk__in=account_ids)
    }
    media = {
        asset.pk: asset
        for asset in MediaAsset.objects.for_workspace(workspace).filter(pk__in=media_ids)
    }
    return accounts, media


def _check_references(
    item: _Item, accounts: dict[int, SocialAccount], media: dict[int, MediaAsset]
) -> None:
    """Another workspace's id is reported exactly like one that does not exist."""
    missing: dict[str, list[str]] = {}
    for ref in _media_refs(item):
        if ref.media_id not in media:
            missing[f"{ref.path}.id"] = ["No such media in this workspace."]
    for dest in item.destinations:
        if dest.account_id not in accounts:
            missing[f"{dest.path}.account"] = ["No such account in this workspace."]
    if missing:
        raise NotFound(
            "Some referenced accounts or media do not exist in this workspace.",
            details=missing,
        )


def _content(segments: list[SegmentInput], media: dict[int, MediaAsset]) -> Content:
    return tuple(
        (
            seg.text,
            tuple(
                (ref.media_id, ref.alt_text or media[ref.media_id].alt_text) for ref in seg.media
            ),
        )
        for seg in segments
    )


def _build_renditions(
    item: _Item,
    *,
    workspace: Workspace,
    accounts: dict[int, SocialAccount],
    media: dict[int, MediaAsset],
) -> None:
    """The item's renditions (unsaved) and their content."""
    _check_references(item, accounts, media)
    check_first_comment(item.first_comment, [accounts[d.account_id] for d in item.destinations])
    source = _content(item.segments, media)
    for dest in item.destinations:
        account = accounts[dest.account_id]
        rendition = Rendition(
            workspace_id=workspace.pk,
            social_account=account,
            platform=account.platform,
            settings=dest.settings,
            overrides_content=dest.segments is not None,
            scheduled_at=item.times[dest.path],
            status=R.SCHEDULED if item.target == P.SCHEDULED else R.DRAFT,
        )
        try:
            rendition.full_clean(
                exclude=["publication", "workspace", "social_account"],
                validate_unique=False,
                validate_constraints=False,
            )
        except DjangoValidationError as exc:
            raise ValidationFailed(
                "The publication is not valid.",
                details={f"{dest.path}.{name}": msgs for name, msgs in exc.message_dict.items()},
            ) from None
        item.renditions.append(rendition)
        item.contents.append(_content(dest.segments, media) if dest.segments else source)


# --- phase 3: checks ------------------------------------------------------------------------


def _existing_keys(workspace: Workspace, keys: set[str]) -> dict[str, Publication]:
    if not keys:
        return {}
    found = Publication.objects.for_workspace(workspace).filter(reference_key__in=keys)
    # Every row found has one of the keys; the guard only tells the type checker.
    return {
        publication.reference_key: publication
        for publication in found
        if publication.reference_key is not None
    }


class _MonthlyQuota:
    """The organization's monthly quota, counted once, then item by item."""

    def __init__(self, organization: Organization, now: datetime) -> None:
        self.organization = organization
        self.start, self.end = quotas.month_bounds(now)
        self.used = Publication.objects.filter(
            workspace__organization=organization,
            created_at__gte=self.start,
            created_at__lt=self.end,
        ).count()

    def check(self) -> None:
        limit = self.organization.monthly_post_quota
        if self.used >= limit:
            raise QuotaExceeded(
                f"The organization has created {self.used} of its {limit} publications this "
                f"month ({self.start:%Y-%m}, UTC); the quota resets on {self.end:%Y-%m-%d}.",
                code="MONTHLY_QUOTA_EXCEEDED",
                details={
                    "limit": limit,
                    "used": self.used,
                    "period": f"{self.start:%Y-%m}",
                    "resets_at": self.end.isoformat(),
                },
            )

    def take(self) -> None:
        self.used += 1


def _check_schedulable(item: _Item, *, media: dict[int, MediaAsset], now: datetime) -> None:
    """The scheduling gate of schedule_renditions, on unsaved renditions: every problem
    against the platform's capabilities, disabled accounts and times in the past."""
    errors = FieldErrors()
    for rendition, content, dest in zip(
        item.renditions, item.contents, item.destinations, strict=True
    ):
        problems = validate_rendition(
            rendition.platform,
            [text for text, _media in content],
            rendition.settings,
            _media_infos(content, media),
            text_limit=account_text_limit(rendition.social_account),
        )
        for problem in problems:
            errors.details.setdefault(f"{dest.path}.{problem.path}", []).append(problem.message)
        if rendition.social_account.status == SocialAccount.Status.DISABLED:
            errors.details.setdefault(f"{dest.path}.account", []).append(
                "This account is disabled."
            )
        field_name = f"{dest.path}.scheduled_at" if rendition.scheduled_at else "scheduled_at"
        try:
            check_not_in_past(item.publish_at(rendition.scheduled_at), now=now, field=field_name)
        except ScheduleError as exc:
            errors.absorb(exc)
    errors.raise_if_any("The publication cannot be scheduled as it is.")


def _media_infos(content: Content, assets: dict[int, MediaAsset]) -> list[list[MediaInfo]]:
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


def _daily_cap(platform: str) -> int | None:
    try:
        return get_capabilities(platform).daily_cap
    except UnknownPlatform:
        return None


class _DailyCaps:
    """Per-account daily caps: what the database holds, counted once with one grouped
    query, plus what this call accepted so far."""

    def __init__(self, items: list[_Item], accounts: dict[int, SocialAccount]) -> None:
        self.caps = {
            pk: cap
            for pk, account in accounts.items()
            if (cap := _daily_cap(account.platform)) is not None
        }
        self.used: Counter[tuple[int, Any]] = Counter()
        days = [
            item.publish_at(item.times.get(dest.path))
            for item in items
            if item.target == P.SCHEDULED
            for dest in item.destinations
            if dest.account_id in self.caps
        ]
        if not days:
            return
        start = quotas.day_bounds(min(days))[0]
        end = quotas.day_bounds(max(days))[1]
        rows = (
            Rendition.objects.with_effective_scheduled_at()
            .filter(quotas.COUNTS_TOWARD_DAILY_CAP)
            .filter(social_account_id__in=self.caps, effective_at__gte=start, effective_at__lt=end)
            .annotate(day=TruncDate("effective_at", tzinfo=UTC))
            .values("social_account_id", "day")
            .annotate(n=Count("id"))
        )
        for row in rows:
            self.used[(row["social_account_id"], row["day"])] = row["n"]

    def _key(self, rendition: Rendition, item: _Item) -> tuple[int, Any]:
        day = item.publish_at(rendition.scheduled_at).astimezone(UTC).date()
        return rendition.social_account_id, day

    def check(self, item: _Item) -> None:
        for rendition, dest in zip(item.renditions, item.destinations, strict=True):
            cap = self.caps.get(rendition.social_account_id)
            if cap is None:
                continue
            key = self._key(rendition, item)
            used = self.used[key]
            if used + 1 > cap:
                account = rendition.social_account
                raise QuotaExceeded(
                    f"{account.platform} account @{account.handle} already has {used} posts "
                    f"on {key[1]:%Y-%m-%d} (UTC); the platform allows {cap} a day.",
                    code="DAILY_CAP_EXCEEDED",
                    details={
                        "field": f"{dest.path}.account",
                        "account": account.pk,
                        "handle": account.handle,
                        "platform": account.platform,
                        "limit": cap,
                        "used": used,
                        "day": f"{key[1]:%Y-%m-%d}",
                    },
                )

    def take(self, item: _Item) -> None:
        if item.target != P.SCHEDULED:
            return
        for rendition in item.renditions:
            if rendition.social_account_id in self.caps:
                self.used[self._key(rendition, item)] += 1


# --- phase 4: write -------------------------------------------------------------------------


def _write(items: list[_Item], *, workspace: Workspace, author: User | None) -> list[Publication]:
    """Insert the accepted items: one statement per table, one for their publish jobs."""
    if not items:
        return []
    publications = [_publication(item, workspace=workspace, author=author) for item in items]
    for item, publication in zip(items, publications, strict=True):
        publication.status = aggregate_status(
            [RenditionState(status=r.status) for r in item.renditions], current=P.DRAFT
        )
    Publication.objects.bulk_create(publications)

    sources = [
        PublicationSegment(publication=publication, position=position, text=seg.text)
        for item, publication in zip(items, publications, strict=True)
        for position, seg in enumerate(item.segments)
    ]
    PublicationSegment.objects.bulk_create(sources)
    by_publication: dict[int, list[PublicationSegment]] = {}
    for row in sources:
        by_publication.setdefault(row.publication_id, []).append(row)
    SegmentMedia.objects.bulk_create(
        SegmentMedia(segment=row, media_id=ref.media_id, position=j, alt_text=ref.alt_text)
        for item, publication in zip(items, publications, strict=True)
        for row, seg in zip(by_publication[publication.pk], item.segments, strict=True)
        for j, ref in enumerate(seg.media)
    )

    renditions = []
    for item, publication in zip(items, publications, strict=True):
        for rendition in item.renditions:
            rendition.publication = publication
            renditions.append(rendition)
    Rendition.objects.bulk_create(renditions)

    segments = []
    for item, publication in zip(items, publications, strict=True):
        own = by_publication[publication.pk]
        for rendition, content in zip(item.renditions, item.contents, strict=True):
            segments += [
                RenditionSegment(
                    rendition=rendition,
                    source_segment=own[i] if i < len(own) else None,
                    position=i,
                    # Following the source: its text is read from there, not copied.
                    own_text=None if not rendition.overrides_content and i < len(own) else text,
                )
                for i, (text, _media) in enumerate(content)
            ]
    RenditionSegment.objects.bulk_create(segments)
    # The segments were built in content order, so they pair up with the flattened content.
    flat = [refs for item in items for content in item.contents for _text, refs in content]
    RenditionMedia.objects.bulk_create(
        RenditionMedia(rendition_segment=row, media_id=media_id, position=j, alt_text=alt)
        for row, refs in zip(segments, flat, strict=True)
        for j, (media_id, alt) in enumerate(refs)
    )

    job_enqueue_many(
        JobSpec(
            type=PUBLISH_JOB,
            payload={"rendition_id": rendition.pk},
            organization_id=workspace.organization_id,
            workspace_id=workspace.pk,
            run_at=item.publish_at(rendition.scheduled_at),
            dedupe_key=publish_dedupe_key(rendition.pk),
        )
        for item in items
        for rendition in item.renditions
        if rendition.status == R.SCHEDULED
    )
    events.emit_many(
        events.PUBLICATION_STATUS_CHANGED,
        (
            {"publication": publication, "previous": P.DRAFT, "status": publication.status}
            for publication in publications
            if publication.status != P.DRAFT
        ),
    )
    return publications

"""The composer's template data: each part, destination and setting with its form ids,
counts and messages worked out here, so the templates only lay them out."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.urls import reverse

from apps.accounts.models import SocialAccount, Workspace
from apps.providers.catalog import PlatformCapabilities, SettingSpec
from apps.providers.live.readiness import effective_capabilities
from apps.web.composer.checks import Count, DestinationCheck, DraftCheck, Message
from apps.web.composer.draft import DestinationDraft, Draft, MediaDraft, setting_to_form
from apps.web.composer.previews import Preview, preview_draft


@dataclass
class MediaView:
    position: int
    media: MediaDraft
    preview_url: str
    field_id: str
    alt_id: str
    errors: list[str]

    @property
    def is_image(self) -> bool:
        return self.media.asset.kind in ("image", "gif")


@dataclass
class PartView:
    index: int
    label: str
    text: str
    field_id: str
    counts_id: str
    errors: list[str]
    counts: list[tuple[DestinationCheck, Count]] = field(default_factory=list)
    media: list[MediaView] = field(default_factory=list)
    upload_errors: list[str] = field(default_factory=list)


@dataclass
class SettingView:
    spec: SettingSpec
    value: str
    field_id: str
    errors: list[str]


@dataclass
class DestinationView:
    destination: DestinationDraft
    check: DestinationCheck | None
    parts: list[PartView]
    settings: list[SettingView]
    # The catalog with today's readiness (live validations), for the badge.
    readiness: PlatformCapabilities | None = None
    preview: Preview | None = None  # how its network will show the post, in its tab

    @property
    def key(self) -> str:
        return self.destination.key

    @property
    def account(self) -> SocialAccount:
        return self.destination.account

    @property
    def capabilities(self) -> PlatformCapabilities | None:
        return self.readiness or self.destination.capabilities


@dataclass
class AccountChoice:
    account: SocialAccount
    capabilities: PlatformCapabilities | None
    selected: bool

    @property
    def is_selectable(self) -> bool:
        return self.account.status != SocialAccount.Status.DISABLED


def _part_label(index: int, total: int) -> str:
    return f"Part {index + 1} of {total}" if total > 1 else "Text"


def composer_context(
    *,
    workspace: Workspace,
    draft: Draft,
    check: DraftCheck,
    accounts: list[SocialAccount],
    errors: Sequence[Message] = (),
    upload_errors: dict[int, list[str]] | None = None,
) -> dict:
    """Everything the composer templates read (the form and the live-check fragment)."""
    by_field = _errors_by_field(errors)
    parts = _part_views(
        workspace=workspace,
        draft=draft,
        check=check,
        by_field=by_field,
        upload_errors=upload_errors or {},
    )
    # One read of the live validations: readiness is shown, never checked against.
    effective = effective_capabilities()
    destinations = _destination_views(
        draft=draft, check=check, by_field=by_field, effective=effective
    )
    active = draft.active_tab if draft.destination(draft.active_tab) else ""
    previews = preview_draft(workspace, draft)
    by_key = {preview.key: preview for preview in previews}
    for view in destinations:
        view.preview = by_key.get(view.key)
    return {
        "draft": draft,
        "check": check,
        "parts": parts,
        "destination_views": destinations,
        "account_choices": _account_choices(draft, accounts, effective),
        "errors": list(errors),
        "general_errors": [m for m in errors if not m.field_id],
        "schedule_errors": by_field.get("schedule-date", []),
        "destination_errors": by_field.get("destinations", []),
        "first_comment_errors": by_field.get("first-comment", []),
        "first_comment_platforms": _first_comment_platforms(draft),
        "active_tab": active or (destinations[0].key if destinations else ""),
        "previews": previews,
        "needs_reconnect": [
            d.account
            for d in draft.destinations
            if d.account.status == SocialAccount.Status.NEEDS_RECONNECT
        ],
    }


def _errors_by_field(errors: Sequence[Message]) -> dict[str, list[str]]:
    """Messages grouped by the form id they belong to, so each field shows its own."""
    by_field: dict[str, list[str]] = defaultdict(list)
    for message in errors:
        by_field[message.field_id].append(message.message)
    return by_field


def _part_views(
    *,
    workspace: Workspace,
    draft: Draft,
    check: DraftCheck,
    by_field: dict[str, list[str]],
    upload_errors: dict[int, list[str]],
) -> list[PartView]:
    """The shared text's parts, each with its counts per destination and its media."""
    total = len(draft.segments)
    parts = []
    for i, segment in enumerate(draft.segments):
        part = PartView(
            index=i,
            label=_part_label(i, total),
            text=segment.text,
            field_id=f"seg-{i}-text",
            counts_id=f"seg-{i}-counts",
            errors=by_field.get(f"seg-{i}-text", []),
            counts=check.source_counts(i),
            upload_errors=upload_errors.get(i, []) + by_field.get(f"seg-{i}-file", []),
        )
        part.media = _media_views(workspace, i, segment.media, by_field)
        parts.append(part)
    return parts


def _media_views(
    workspace: Workspace,
    index: int,
    media: Sequence[MediaDraft],
    by_field: dict[str, list[str]],
) -> list[MediaView]:
    """One part's attachments, with the workspace-scoped URL their preview is served from."""
    return [
        MediaView(
            position=j,
            media=item,
            preview_url=reverse(
                "media-file",
                kwargs={"workspace_slug": workspace.slug, "pk": item.asset.pk},
            ),
            field_id=f"seg-{index}-media-{j}",
            alt_id=f"seg-{index}-alt-{j}",
            errors=by_field.get(f"seg-{index}-media-{j}", [])
            + by_field.get(f"seg-{index}-alt-{j}", []),
        )
        for j, item in enumerate(media)
    ]


def _destination_views(
    *,
    draft: Draft,
    check: DraftCheck,
    by_field: dict[str, list[str]],
    effective: dict[str, PlatformCapabilities],
) -> list[DestinationView]:
    """Each chosen destination's tab: its own text when overridden, its settings, its badge."""
    total = len(draft.segments)
    destinations = []
    for destination in draft.destinations:
        dest_check = check.for_destination(destination.key)
        destinations.append(
            DestinationView(
                destination=destination,
                check=dest_check,
                parts=_override_parts(destination, dest_check, total, by_field),
                settings=_setting_views(destination, by_field),
                readiness=effective.get(destination.account.platform),
            )
        )
    return destinations


def _override_parts(
    destination: DestinationDraft,
    dest_check: DestinationCheck | None,
    total: int,
    by_field: dict[str, list[str]],
) -> list[PartView]:
    """A destination's own text, part by part; none when it follows the shared text."""
    if not destination.override:
        return []
    key = destination.key
    override_parts = []
    for i, text in enumerate(destination.texts[:total]):
        field_id = f"override-{key}-{i}-text"
        override_parts.append(
            PartView(
                index=i,
                label=_part_label(i, total),
                text=text,
                field_id=field_id,
                counts_id=f"override-{key}-{i}-counts",
                errors=by_field.get(field_id, []),
                counts=[(dest_check, c)] if dest_check and (c := dest_check.count_for(i)) else [],
            )
        )
    return override_parts


def _setting_views(
    destination: DestinationDraft, by_field: dict[str, list[str]]
) -> list[SettingView]:
    """The platform's settings as form fields, valued from the destination's draft."""
    key = destination.key
    caps = destination.capabilities
    return [
        SettingView(
            spec=spec,
            value=setting_to_form(destination.settings.get(spec.name)),
            field_id=f"setting-{key}-{spec.name}",
            errors=by_field.get(f"setting-{key}-{spec.name}", []),
        )
        for spec in (caps.settings if caps else ())
    ]


def _account_choices(
    draft: Draft,
    accounts: list[SocialAccount],
    effective: dict[str, PlatformCapabilities],
) -> list[AccountChoice]:
    """Every account offered as a destination, ticked when the draft already has it."""
    selected = {d.key for d in draft.destinations}
    return [
        AccountChoice(
            account=account,
            capabilities=effective.get(account.platform),
            selected=str(account.pk) in selected,
        )
        for account in accounts
    ]


def _first_comment_platforms(draft: Draft) -> tuple[list[str], list[str]]:
    """The chosen destinations' platforms that take a first comment, and those that do not."""
    takes: set[str] = set()
    skips: set[str] = set()
    for destination in draft.destinations:
        caps = destination.capabilities
        (takes if caps and caps.supports_first_comment else skips).add(destination.account.platform)
    return sorted(takes), sorted(skips)

"""The publication a series repeats: its template, checked against the workspace."""

from __future__ import annotations

from typing import Any

from apps.accounts.models import SocialAccount, Workspace
from apps.common.errors import NotFound, ValidationFailed
from apps.publications import inputs
from apps.publications.models import MediaAsset


def clean_template(workspace: Workspace, template: Any) -> dict:
    """{"segments": [...], "destinations": [...]} as publication_create reads them, every
    account and media in the workspace; destinations carry no time of their own (each
    occurrence gives it)."""
    if not isinstance(template, dict):
        raise ValidationFailed(
            "template must be an object {segments, destinations}.",
            details={"template": ["Must be an object {segments, destinations}."]},
        )
    errors: dict[str, list[str]] = {}
    for key in sorted(set(template) - {"segments", "destinations"}):
        errors[f"template.{key}"] = ["Unknown field."]
    segments = inputs.parse_segments(template.get("segments"), path="segments", errors=errors)
    destinations = inputs.parse_destinations(template.get("destinations"), errors=errors)
    if not destinations and "destinations" not in errors:
        errors["destinations"] = ["Choose at least one destination."]
    for dest in destinations:
        if dest.has_own_schedule or dest.timezone:
            errors[f"{dest.path}.scheduled_at"] = ["Each occurrence sets the time."]
    if errors:
        raise ValidationFailed(
            "The series template is not valid.",
            details={
                (k if k.startswith("template.") else f"template.{k}"): v for k, v in errors.items()
            },
        )
    media_ids = {ref.media_id for seg in segments for ref in seg.media}
    for dest in destinations:
        media_ids |= {ref.media_id for seg in dest.segments or [] for ref in seg.media}
    found_media = set(
        MediaAsset.objects.for_workspace(workspace)
        .filter(pk__in=media_ids)
        .values_list("pk", flat=True)
    )
    account_ids = {dest.account_id for dest in destinations}
    found_accounts = set(
        SocialAccount.objects.for_workspace(workspace)
        .filter(pk__in=account_ids)
        .values_list("pk", flat=True)
    )
    missing = {}
    if media_ids - found_media:
        missing["template.segments"] = ["Some media do not exist in this workspace."]
    for dest in destinations:
        if dest.account_id not in found_accounts:
            missing[f"template.{dest.path}.account"] = ["No such account in this workspace."]
    if missing:
        raise NotFound("Some referenced accounts or media do not exist.", details=missing)
    return {"segments": template.get("segments"), "destinations": template.get("destinations")}

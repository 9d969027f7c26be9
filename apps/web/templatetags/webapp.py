"""Template helpers of the web app: navigation, the workspace switcher, permission checks
and small formatting filters."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.urls import reverse
from django.utils import timezone

from apps.accounts.permissions import workspaces_for
from apps.ops.services import maintenance_state
from apps.web.access import permits
from apps.web.navigation import WORKSPACE_NAV

register = template.Library()

PLATFORM_NAMES = {
    "mastodon": "Mastodon",
    "bluesky": "Bluesky",
    "linkedin": "LinkedIn",
    "x": "X",
    "threads": "Threads",
    "instagram": "Instagram",
    "facebook": "Facebook Pages",
    "tiktok": "TikTok",
    "youtube": "YouTube",
    "pinterest": "Pinterest",
    "reddit": "Reddit",
    "sandbox": "Sandbox",
}

ACTION_LABELS = {
    "reconnect": "Reconnect the account",
    "edit": "Edit the post",
    "wait": "Wait: it is retried automatically",
    "checking": "Wait: the platform is being checked automatically",
    "verify": "Check the platform, then resolve",
    "retry": "Retry",
    "contact_support": "Contact support",
}


@register.filter
def platform_name(platform: str) -> str:
    return PLATFORM_NAMES.get(platform, str(platform).title())


@register.filter
def humanize(value: str | None) -> str:
    """snake_case codes as words: partially_published -> Partially published."""
    if not value:
        return ""
    text = str(value).replace("_", " ")
    return text[:1].upper() + text[1:]


NEEDS_ATTENTION = "needs_attention"


def _needs_attention(item) -> bool:
    """A rendition, or a publication with a rendition, whose outcome is unknown: the post
    may be live, so it is not "failed" until someone looks (uses prefetched renditions)."""
    if hasattr(item, "ambiguous"):
        return bool(item.ambiguous)
    renditions = getattr(item, "renditions", None)
    return renditions is not None and any(r.ambiguous for r in renditions.all())


@register.filter
def status_key(item) -> str:
    """The status a publication or rendition shows as (its CSS class suffix)."""
    return NEEDS_ATTENTION if _needs_attention(item) else str(item.status)


@register.filter
def status_label(item) -> str:
    """The status words of a publication or rendition: "Needs attention" when an outcome
    is unknown, else its status."""
    return "Needs attention" if _needs_attention(item) else humanize(item.status)


# What each kind of delivery record entry is called, one and many.
_RECORD_KINDS = {
    "publish": ("publish attempt", "publish attempts"),
    "poll": ("status check", "status checks"),
    "reconcile": ("lookup", "lookups"),
    "resolve": ("resolution", "resolutions"),
    "comment": ("comment attempt", "comment attempts"),
}


@register.filter
def record_summary(attempts) -> str:
    """A delivery record's size by kind: "3 entries: 1 publish attempt, 2 lookups". Its
    entries are not all tries to publish (lookups, comments, resolutions), so the card's
    "Publish tries" and the record never count the same word differently."""
    entries = list(attempts)
    if not entries:
        return "empty"
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.kind] = counts.get(entry.kind, 0) + 1
    parts = []
    for kind in [*_RECORD_KINDS, *sorted(set(counts) - set(_RECORD_KINDS))]:
        if kind in counts:
            one, many = _RECORD_KINDS.get(kind, (humanize(kind).lower(), humanize(kind).lower()))
            parts.append(f"{counts[kind]} {one if counts[kind] == 1 else many}")
    total = len(entries)
    return f"{total} entr{'y' if total == 1 else 'ies'}: {', '.join(parts)}"


_RESOLVED_PUBLISHED = "Resolved as published by "


@register.filter
def published_resolution(attempts) -> dict | None:
    """How a destination resolved as published came to be: the person's resolution
    (``entry``, ``who``) and the publish attempt whose outcome was unknown (``sent``, or
    None), when a person's resolution is the last word of its record. Its publish time is
    then not known: the resolution's time is when it was confirmed."""
    entries = list(attempts)
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        if entry.kind == "publish" and entry.outcome == "published":
            return None  # sent again and published for real afterwards
        if entry.kind == "resolve" and entry.note.startswith(_RESOLVED_PUBLISHED):
            sent = next(
                (
                    earlier
                    for earlier in reversed(entries[:index])
                    if earlier.kind == "publish" and earlier.outcome in ("unknown", "lost")
                ),
                None,
            )
            who = entry.note.removeprefix(_RESOLVED_PUBLISHED).removesuffix(".")
            return {"entry": entry, "sent": sent, "who": who}
    return None


@register.filter
def action_label(action: str | None) -> str:
    return ACTION_LABELS.get(action or "", humanize(action))


@register.filter
def at(mapping: dict | None, key: str):
    """mapping[key], or None: `errors|at:"segments.0.text"`."""
    if not mapping:
        return None
    return mapping.get(key)


@register.filter
def wall_time(value: str | None) -> datetime | None:
    """A stored wall-clock time (``2026-12-07T09:00:00``, a series' zone) as a naive
    datetime for the ``date`` filter, which then shows it as the app shows times without
    moving it to another zone; None when it is no such time."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed.replace(tzinfo=None)


@register.inclusion_tag("web/_maintenance_banner.html")
def maintenance_banner() -> dict:
    """The operators' maintenance message on every page while maintenance is on, so a
    person reads it before writing something the 503 would then refuse (the state is
    cached per process: no query on most pages)."""
    state = maintenance_state()
    return {"maintenance": state if state.is_on else None}


@register.simple_tag
def zone_name() -> str:
    """The zone times are shown in right now (the user's display zone on their pages)."""
    return timezone.get_current_timezone_name()


@register.simple_tag(takes_context=True)
def can(context: template.Context, workspace, action: str) -> bool:
    request = context.get("request")
    if request is None or workspace is None or not request.user.is_authenticated:
        return False
    return permits(request, workspace, action)


@register.inclusion_tag("web/_workspace_nav.html", takes_context=True)
def workspace_nav(context: template.Context) -> dict:
    request = context.get("request")
    workspace = context.get("workspace")
    items = []
    if request is not None and workspace is not None and request.user.is_authenticated:
        for item in WORKSPACE_NAV:
            if permits(request, workspace, item.action):
                items.append(
                    {
                        "label": item.label,
                        "url": reverse(item.url_name, kwargs={"workspace_slug": workspace.slug}),
                        "current": item.section == context.get("section"),
                    }
                )
    return {"items": items, "workspace": workspace}


@register.inclusion_tag("web/_workspace_switcher.html", takes_context=True)
def workspace_switcher(context: template.Context) -> dict:
    request = context.get("request")
    current = context.get("workspace")
    groups: list[dict] = []
    if request is not None and request.user.is_authenticated:
        for workspace in workspaces_for(request.user):
            if not groups or groups[-1]["organization"] != workspace.organization:
                groups.append({"organization": workspace.organization, "workspaces": []})
            groups[-1]["workspaces"].append(workspace)
    return {"groups": groups, "current": current}


@register.simple_tag(takes_context=True)
def user_organizations(context: template.Context) -> list:
    from apps.accounts.membership import MANAGERS
    from apps.accounts.models import Organization

    request = context.get("request")
    if request is None or not request.user.is_authenticated:
        return []
    # The organization page is for its owners and admins only.
    return list(
        Organization.objects.filter(
            memberships__user=request.user, memberships__role__in=MANAGERS
        ).order_by("name")
    )

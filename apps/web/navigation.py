"""The workspace navigation bar. Each entry names its URL and the action a user needs to
see it; a page added later (webhooks, series) adds one line here."""

from __future__ import annotations

from dataclasses import dataclass

from apps.accounts.permissions import Action


@dataclass(frozen=True)
class NavItem:
    label: str
    url_name: str  # reversed with workspace_slug
    action: Action
    section: str  # matched against the page's `section` to mark the current entry


WORKSPACE_NAV: list[NavItem] = [
    NavItem("Overview", "workspace-home", Action.VIEW, "home"),
    NavItem("Compose", "composer", Action.EDIT, "compose"),
    NavItem("Calendar", "calendar", Action.VIEW, "calendar"),
    NavItem("Queue", "queue", Action.VIEW, "queue"),  # issue 20
    NavItem("Evergreen", "evergreen", Action.VIEW, "evergreen"),  # issue 34
    NavItem("Posts", "publication-list", Action.VIEW, "posts"),
    NavItem("Inbox", "inbox", Action.VIEW, "inbox"),  # issue 35
    NavItem("Analytics", "analytics", Action.VIEW, "analytics"),  # issue 35
    NavItem("Reviews", "reviews", Action.VIEW, "reviews"),
    NavItem("Media", "media-library", Action.VIEW, "media"),  # issue 20
    NavItem("Accounts", "workspace-accounts", Action.VIEW, "accounts"),
    NavItem("Team", "workspace-team", Action.VIEW, "team"),
    NavItem("Series", "series", Action.VIEW, "series"),  # issue 10
    NavItem("Webhooks", "webhooks", Action.ADMIN, "webhooks"),  # issue 10
    NavItem("API tokens", "api-tokens", Action.ADMIN, "tokens"),
]

"""What a person should know about a platform before connecting it, and the name of the
platform's operator page (docs/platforms/<platform>.md)."""

from __future__ import annotations

# Only what changes who can connect, or as whom the site posts. Everything else is on the
# platform's docs page.
CONNECT_NOTES = {
    "reddit": (
        "API access for new apps needs Reddit's approval: this installation's Reddit app "
        "must be approved before accounts can post."
    ),
    "linkedin": (
        "Posts as you. Posting as a company Page needs LinkedIn's Community Management API "
        "product (the w_organization_social scope)."
    ),
}


def connect_note(platform: str) -> str:
    return CONNECT_NOTES.get(platform, "")


def docs_page(platform: str) -> str:
    return f"docs/platforms/{platform}.md"

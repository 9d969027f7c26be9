"""Platform marks beside account names (static/img/platforms/<platform>.svg) and the
initials that stand for a person in the top bar."""

from django import template
from django.templatetags.static import static
from django.utils.html import format_html

register = template.Library()

PLATFORMS_WITH_MARKS = frozenset(
    {
        "bluesky",
        "facebook",
        "instagram",
        "linkedin",
        "mastodon",
        "pinterest",
        "reddit",
        "sandbox",
        "threads",
        "tiktok",
        "x",
        "youtube",
    }
)


@register.simple_tag
def platform_icon(platform: str, size: int = 16) -> str:
    """The platform's mark; decorative (alt=""), as the platform's name is always beside
    it. Nothing for a platform without a mark."""
    if platform not in PLATFORMS_WITH_MARKS:
        return ""
    return format_html(
        '<img class="platform-icon" src="{}" alt="" width="{}" height="{}">',
        static(f"img/platforms/{platform}.svg"),
        size,
        size,
    )


@register.filter
def initials(user) -> str:
    """Up to two letters for a person: of their name's first and last words, else of the
    email's local part."""
    name = (getattr(user, "name", "") or "").split()
    if name:
        letters = name[0][:1] + (name[-1][:1] if len(name) > 1 else "")
    else:
        letters = (getattr(user, "email", "") or "?")[:2]
    return letters.upper()

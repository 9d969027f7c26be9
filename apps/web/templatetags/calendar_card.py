"""A calendar card's markup, written in Python: a page of the calendar shows hundreds of
cards, and the same markup through the template engine cost a millisecond and more each
(variable lookups, date filters, URL reversals); this writes it in a few dozen
microseconds. The links are reversed once per page and the card's id put in.
"""

from __future__ import annotations

import unicodedata
from datetime import date
from urllib.parse import quote

from django import template
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from apps.web.html import escape
from apps.web.templatetags.platform_icons import platform_icon
from apps.web.templatetags.webapp import humanize, platform_name

register = template.Library()

_SENTINEL = 987654321  # an id no card has, replaced by each card's own


def truncate(text: str, length: int) -> str:
    """The `truncatechars` filter, without its cost for a text that fits."""
    if len(text) <= length:
        return unicodedata.normalize("NFC", text)
    return Truncator(text).chars(length)


def _day_label(moment: date) -> str:
    """As the `date` filter's "l j F" (English names, as the calendar shows them)."""
    return f"{moment:%A} {moment.day} {moment:%B}"


class _Links:
    """The page's links of a card, reversed once and completed by the card's id."""

    def __init__(self, slug: str, full_path: str) -> None:
        def pattern(name: str) -> str:
            return reverse(name, kwargs={"workspace_slug": slug, "pk": _SENTINEL})

        self.detail = pattern("publication-detail")
        self.media = pattern("media-file")
        self.reschedule = pattern("publication-reschedule")
        self.icons: dict[str, str] = {}
        self.next = quote(full_path, safe="/")  # as the `urlencode` filter

    def icon(self, platform: str) -> str:
        if platform not in self.icons:
            self.icons[platform] = platform_icon(platform, 14)
        return self.icons[platform]

    @staticmethod
    def fill(link: str, pk: int) -> str:
        return link.replace(str(_SENTINEL), str(pk))


def _page_links(context) -> _Links:
    cache = context.render_context
    links = cache.get("calendar_card_links")
    if links is None:
        request = context["request"]
        links = cache["calendar_card_links"] = _Links(
            context["workspace"].slug, request.get_full_path()
        )
    return links


@register.simple_tag(takes_context=True)
def calendar_card(context, card, *, drag: bool, wide: int) -> SafeString:
    links = _page_links(context)
    return mark_safe(render_card(card, links, drag=drag, wide=wide))  # noqa: S308 - escaped


@register.simple_tag(takes_context=True)
def calendar_more(context, more: int, on: date) -> SafeString:
    """ "N more" of a day (or of an hour, `on` its start): a link to the day's posts."""
    day = escape(f"{on:%Y-%m-%d}")
    return mark_safe(  # noqa: S308 - escaped
        f'<a class="cal-more" href="{escape(context["list_url"])}?start={day}&amp;end={day}">'
        f'{more} more<span class="visually-hidden"> on {_day_label(on)}</span></a>\n'
    )


@register.simple_tag(takes_context=True)
def week_slot(context, slot, row) -> SafeString:
    """One hour of the week grid, its cards and its "N more" (168 of them a page)."""
    links = _page_links(context)
    classes = f"slot{' past' if slot.is_past else ''}{' has-items' if slot.items else ''}"
    compose = (
        f' data-compose-at="{slot.compose_at}"'
        if context.get("can_edit") and not slot.is_past
        else ""
    )
    out = [
        f'<td class="{classes}" data-drop-date="{slot.drop_date}"'
        f' data-drop-hour="{slot.start.hour}" data-drop-fold="{slot.fold}"'
        f' data-col="{slot.column}" data-row="{slot.row}"'
        f' data-label="{escape(slot.day_label)}, {escape(row.label)}"{compose}>\n                '
    ]
    if slot.items:
        cards = "".join(render_card(card, links, drag=True, wide=40) for card in slot.items)
        out.append(
            '\n                  <ul class="cal-items">\n                    '
            f"{cards}\n                  </ul>\n                "
        )
    out.append("\n                ")
    if slot.more:
        out.append(calendar_more(context, slot.more, slot.start))
    out.append("\n              </td>")
    return mark_safe("".join(out))  # noqa: S308 - escaped


def render_card(card, links: _Links, *, drag: bool, wide: int) -> str:
    local = card.local
    hhmm = f"{local:%H:%M}"
    status = escape(card.status)
    status_words = escape(humanize(card.status))
    movable_here = card.movable and drag
    out = [
        f'<li class="cal-item status-{status}{" movable" if movable_here else ""}"'
        f' id="cal-{card.pk}" data-pk="{card.pk}" data-revision="{card.revision}"'
        f' data-date="{local:%Y-%m-%d}" data-time="{hhmm}" data-fold="{local.fold}"'
        f' data-label="{_day_label(local)}, {hhmm}"',
        ' data-movable tabindex="0" aria-roledescription="movable post"'
        ' aria-describedby="cal-move-hint"'
        if movable_here
        else "",
        f' aria-label="{hhmm}, {status_words}:'
        f' {escape(truncate(card.text or "media only", 60))}">\n',
        '  <span class="cal-head">\n',
        f'    <span class="time">{hhmm}</span>\n',
        '    <span class="cal-platforms">',
    ]
    platforms = card.platforms
    for d in platforms:
        icon = links.icon(d.platform)
        out.append(
            f'<span class="pf pf-{escape(d.platform)}{" has-icon" if icon else ""}"'
            f' title="{escape(platform_name(d.platform))}" aria-hidden="true">'
            f"{icon if icon else escape(d.mark)}</span>"
        )
    names = ", ".join(escape(platform_name(d.platform)) for d in platforms)
    out.append(f'<span class="visually-hidden">{names}</span></span>\n')
    out.append("    ")
    if card.recurring:
        out.append(
            '<span class="cal-recurring" title="From a series"><span aria-hidden="true">↻'
            '</span><span class="visually-hidden">From a series</span></span>'
        )
    out.append('\n  </span>\n  <span class="cal-body">\n    ')
    if card.thumbnail_id:
        out.append(
            f'<img class="cal-thumb" src="{links.fill(links.media, card.thumbnail_id)}"'
            f' alt="{escape(card.thumbnail_alt)}" loading="lazy" draggable="false"'
            ' width="40" height="40">'
        )
    out.append(
        f'\n    <a href="{links.fill(links.detail, card.pk)}" draggable="false">'
        f"{escape(truncate(card.text or '(media only)', wide))}</a>\n  </span>\n"
    )
    thread = f' <span class="muted">thread of {card.parts}</span>' if card.parts > 1 else ""
    out.append(
        f'  <span class="cal-meta"><span class="badge status-{status}">{status_words}</span>'
        f'{thread} <span class="muted cal-handles">{escape(card.handles)}</span></span>\n  '
    )
    if card.movable:
        move = escape(f"{links.fill(links.reschedule, card.pk)}?next={links.next}")
        out.append(
            f'\n    <a class="move" href="{move}"\n       hx-get="{move}"\n'
            '       hx-target="#quick-edit" hx-swap="innerHTML" draggable="false">Move to…'
            f'<span class="visually-hidden"> (the post of {local.day} {local:%B %H:%M})'
            "</span></a>\n  "
        )
    out.append("\n</li>\n")
    return "".join(out)

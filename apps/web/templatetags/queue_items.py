"""The queue's rows, written in Python: the queue page shows up to 30 posts an account,
each with two forms, and the same markup through the template engine cost more than a
millisecond a row (URL reversals, date filters, variable lookups). The links are reversed
once per page and each row's ids put in; times are shown in the zone the template is in.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from apps.planning.selectors import AccountQueue, QueuedPost
from apps.web.html import escape
from apps.web.templatetags.calendar_card import truncate

register = template.Library()

_SENTINEL = 987654321  # an id no post has, replaced by each row's own


def _label(moment: datetime) -> str:
    """As the `date` filter's "D j M, H:i" in the current zone (English names)."""
    local = timezone.localtime(moment)
    return f"{local:%a} {local.day} {local:%b}, {local:%H:%M}"


class _Links:
    def __init__(self, slug: str) -> None:
        one = {"workspace_slug": slug, "pk": _SENTINEL}
        self.detail = reverse("publication-detail", kwargs=one)
        self.remove = reverse("queue-remove", kwargs=one)
        self.move = reverse("queue-move", kwargs={"workspace_slug": slug})

    @staticmethod
    def fill(link: str, pk: int) -> str:
        return link.replace(str(_SENTINEL), str(pk))


@register.simple_tag(takes_context=True)
def queue_items(context, q: AccountQueue) -> SafeString:
    """The <li> of each post of an account's queue (templates/web/queue/_account.html)."""
    links = _Links(context["workspace"].slug)
    token = context.get("csrf_token")
    csrf = (
        f'<input type="hidden" name="csrfmiddlewaretoken" value="{escape(token)}">'
        if token and token != "NOTPROVIDED"
        else ""
    )
    can_publish = bool(context.get("can_publish"))
    rows = [_row(post, q.account.pk, links, csrf=csrf, can_publish=can_publish) for post in q.posts]
    return mark_safe("".join(rows))  # noqa: S308 - every value is escaped or a number


def _swap_button(post: QueuedPost, neighbour: QueuedPost, *, up: bool) -> str:
    direction, arrow = ("up", "↑") if up else ("down", "↓")
    return (
        '<button type="submit" class="secondary small" name="swap"'
        f' value="{neighbour.rendition.pk}:{neighbour.publication.revision}"'
        f' aria-label="Move {direction}: swap with the post at {_label(neighbour.at)}">'
        f"{arrow}</button>"
    )


def _row(post: QueuedPost, account_id: int, links: _Links, *, csrf: str, can_publish: bool) -> str:
    rendition_id = post.rendition.pk
    publication_id = post.publication.pk
    revision = post.publication.revision
    movable = post.can_move and can_publish
    label = _label(post.at)
    kind = ("status-scheduled", "slot") if post.is_slot else ("status-draft", "own time")
    evergreen = (
        ' <span class="badge status-published" title="Shared again by an evergreen post">'
        "evergreen</span>"
        if post.is_evergreen
        else ""
    )
    text = escape(truncate(post.text, 90)) or "(no text)"
    draggable = ' draggable="true"' if movable else ""
    out = [
        f'\n        <li class="queue-item{" movable" if movable else ""}"'
        f' id="queue-item-{rendition_id}"\n'
        f'            data-rendition="{rendition_id}" data-revision="{revision}"'
        f"{draggable}>\n"
        f'          <time datetime="{post.at.astimezone(UTC).isoformat()}" class="queue-time">'
        f"<strong>{label}</strong></time>\n"
        f'          <span class="badge {kind[0]}">{kind[1]}</span>{evergreen}\n'
        f'          <a class="queue-text" href="{links.fill(links.detail, publication_id)}">'
        f"{text}</a>\n          ",
    ]
    if can_publish:
        remove = links.fill(links.remove, publication_id)
        out.append(
            f'\n            <form method="post" class="queue-actions" action="{links.move}"\n'
            f'                  hx-post="{links.move}" hx-target="#queue-{account_id}"'
            ' hx-swap="outerHTML">\n'
            f"              {csrf}\n"
            f'              <input type="hidden" name="rendition" value="{rendition_id}">\n'
            f'              <input type="hidden" name="revision" value="{revision}">\n'
            "              "
        )
        if post.can_move:
            up = _swap_button(post, post.up, up=True) if post.up else ""
            down = _swap_button(post, post.down, up=False) if post.down else ""
            out.append(
                f"\n                {up}\n                {down}\n"
                '                <input type="hidden" name="swap" value="" data-drop-target'
                " disabled>\n              "
            )
        out.append(
            "\n            </form>\n"
            f'            <form method="post" class="queue-actions" action="{remove}"\n'
            f'                  hx-post="{remove}" hx-target="#queue-{account_id}"'
            ' hx-swap="outerHTML"\n'
            '                  hx-confirm="Take this post off the queue? It stays as a draft,'
            ' for every destination.">\n'
            f"              {csrf}\n"
            f'              <input type="hidden" name="account" value="{account_id}">\n'
            f'              <input type="hidden" name="revision" value="{revision}">\n'
            '              <button type="submit" class="danger small">Remove<span'
            f' class="visually-hidden"> the post at {label} from the queue</span></button>\n'
            "            </form>\n          "
        )
    out.append("\n        </li>\n      ")
    return "".join(out)

"""Small charts drawn on the server as SVG: no chart library, no script, no style
attribute (the site's CSP allows none), readable on a phone (they scale to their box).

Every chart is an `<svg role="img">` with a text alternative, and its numbers are also
on the page beside it (a table or a list), so nothing is only in the picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def line_chart(
    points: Sequence[tuple[datetime, int | None]],
    *,
    label: str,
    width: int = 320,
    height: int = 110,
) -> SafeString:
    """A line over time (gaps where a value is None), its latest value and its range:
    the time axis is real time, so uneven reads (the decaying cadence) keep their
    spacing."""
    known = [(at, value) for at, value in points if value is not None]
    alt = escape(label)
    if not known:
        return mark_safe(  # noqa: S308 - only escaped text and numbers
            f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{alt}: no values yet"><text x="8" y="{height / 2:.0f}" '
            f'class="chart-note">No values yet</text></svg>'
        )
    pad_left, pad_right, pad_top, pad_bottom = 34, 8, 10, 18
    start, end = known[0][0], known[-1][0]
    span = max((end - start).total_seconds(), 1.0)
    top = max(value for _, value in known) or 1
    inner_w, inner_h = width - pad_left - pad_right, height - pad_top - pad_bottom

    def xy(at: datetime, value: int) -> str:
        x = pad_left + inner_w * (at - start).total_seconds() / span
        y = pad_top + inner_h * (1 - value / top)
        return f"{_fmt(x)},{_fmt(y)}"

    line = " ".join(xy(at, value) for at, value in known)
    last_at, last = known[-1]
    dots = "".join(
        f'<circle cx="{xy(at, value).split(",")[0]}" cy="{xy(at, value).split(",")[1]}" r="2"/>'
        for at, value in known[-30:]
    )
    return mark_safe(  # noqa: S308 - only escaped text and numbers
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{alt}: {last} on {last_at:%Y-%m-%d}, {len(known)} reads">'
        f"<title>{alt}</title>"
        f'<line class="chart-axis" x1="{pad_left}" y1="{height - pad_bottom}" '
        f'x2="{width - pad_right}" y2="{height - pad_bottom}"/>'
        f'<text class="chart-tick" x="{pad_left - 4}" y="{pad_top + 4}" '
        f'text-anchor="end">{top}</text>'
        f'<text class="chart-tick" x="{pad_left - 4}" y="{height - pad_bottom}" '
        f'text-anchor="end">0</text>'
        f'<text class="chart-tick" x="{pad_left}" y="{height - 4}">{start:%b %d}</text>'
        f'<text class="chart-tick" x="{width - pad_right}" y="{height - 4}" '
        f'text-anchor="end">{end:%b %d}</text>'
        f'<polyline class="chart-line" fill="none" points="{line}"/>'
        f'<g class="chart-dots">{dots}</g></svg>'
    )


def heatmap(cells: Sequence[dict], *, label: str) -> SafeString:
    """Weekday (rows) by hour (columns): each cell's shade is its posts' average
    engagement against the best cell's; an empty cell is outlined only."""
    size, left, top_pad = 12, 30, 14
    width, height = left + 24 * size + 2, top_pad + 7 * size + 2
    averages = {
        (c["weekday"], c["hour"]): c["engagement"] / c["posts"] for c in cells if c["posts"]
    }
    best = max(averages.values(), default=0) or 1
    parts = [
        f'<svg class="chart heatmap" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(label)}"><title>{escape(label)}</title>'
    ]
    for hour in range(0, 24, 6):
        x = left + hour * size
        parts.append(f'<text class="chart-tick" x="{x}" y="{top_pad - 4}">{hour:02d}h</text>')
    for weekday, name in enumerate(WEEKDAYS):
        y = top_pad + weekday * size
        parts.append(f'<text class="chart-tick" x="0" y="{y + size - 2}">{name}</text>')
        for hour in range(24):
            x = left + hour * size
            average = averages.get((weekday, hour))
            if average is None:
                parts.append(
                    f'<rect class="heat-empty" x="{x}" y="{y}" width="{size - 1}" '
                    f'height="{size - 1}"/>'
                )
                continue
            shade = 0.15 + 0.85 * average / best
            parts.append(
                f'<rect class="heat-cell" x="{x}" y="{y}" width="{size - 1}" '
                f'height="{size - 1}" fill-opacity="{shade:.2f}"><title>{name} '
                f"{hour:02d}:00, {_fmt(average)} average</title></rect>"
            )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - only escaped text and numbers

"""Human output: aligned tables and short forms of the API's values. ``--json`` output
bypasses all of this and prints the API's JSON as it came."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

EMPTY = "-"


def print_json(data: Any, *, stream: TextIO | None = None) -> None:
    json.dump(data, stream or sys.stdout, indent=2, ensure_ascii=False)
    (stream or sys.stdout).write("\n")


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """Columns padded to their widest cell; the last column is not padded."""
    cells = [[EMPTY if v is None or v == "" else str(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], len(value))
    lines = []
    for row in [headers, *cells]:
        padded = [value.ljust(widths[i]) for i, value in enumerate(row[:-1])] + [row[-1]]
        lines.append("  ".join(padded).rstrip())
    return "\n".join(lines)


def when(value: str | None) -> str:
    """An ISO instant from the API as ``2027-03-28 07:00:00 UTC`` (or "-")."""
    if not value:
        return EMPTY
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        return value
    if instant.tzinfo is None:
        return value
    return instant.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def shorten(text: str | None, width: int = 40) -> str:
    """One line of at most width characters."""
    line = " ".join((text or "").split())
    return line if len(line) <= width else line[: width - 1] + "..."


def handle(value: str | None) -> str:
    if not value:
        return EMPTY
    return value if value.startswith("@") else f"@{value}"

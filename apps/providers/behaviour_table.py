"""The per-platform behaviour table of docs/delivery.md, generated from the capability
catalog and the adapters, so the page cannot drift from either: what idempotency handle a
platform gives, what settles an answer that never came (a resend under the handle, a
lookup, or a person), whether a post can be deleted, and which work the platform finishes
asynchronously. `python manage.py behaviour_table --write` rewrites the table in place; a
test fails while the page and the generated table differ."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from django.conf import settings

from apps.providers.base import Adapter, SupportsLookup, SupportsStatusPoll, get_adapter
from apps.providers.catalog import PlatformCapabilities, all_capabilities

START = "<!-- behaviour-table:start (generated: python manage.py behaviour_table --write) -->"
END = "<!-- behaviour-table:end -->"
HEADER = (
    "| platform | idempotency handle | an answer that never came | delete | asynchronous "
    "processing |\n| --- | --- | --- | --- | --- |"
)


def delivery_doc() -> Path:
    return Path(settings.BASE_DIR) / "docs" / "delivery.md"


def behaviour_table() -> str:
    """The table, one row per catalogued platform, in the catalog's order."""
    rows = [_row(get_adapter(name), caps) for name, caps in all_capabilities().items()]
    return "\n".join([HEADER, *rows])


def with_table(document: str) -> str:
    """`document` with the text between the markers replaced by the generated table."""
    head, start, rest = document.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"The page has no {START!r} ... {END!r} block.")
    return f"{head}{START}\n{behaviour_table()}\n{END}{tail}"


def _row(adapter: Adapter, caps: PlatformCapabilities) -> str:
    cells = (caps.platform, _handle(caps), _lost_answer(adapter), _delete(caps))
    return "| " + " | ".join((*cells, _asynchronous(adapter, caps))) + " |"


def _handle(caps: PlatformCapabilities) -> str:
    detail = (caps.raw.get("idempotency_detail") or "").split(";")[0].strip()
    return f"`{caps.idempotency}`: {detail}" if detail else f"`{caps.idempotency}`"


def _lost_answer(adapter: Adapter) -> str:
    """What settles an unknown outcome, in the order reconciliation tries it."""
    window = (
        f" within {_duration(adapter.idempotency_window)}" if adapter.idempotency_window else ""
    )
    ways = []
    if adapter.retry_safe_after_unknown:
        ways.append(f"resent under the handle{window}")
    if adapter.duplicate_refusal_names_post:
        window = f" (for {_duration(adapter.duplicate_window)})" if adapter.duplicate_window else ""
        ways.append(
            f"resent once it can no longer land: the duplicate refusal names the post{window}"
        )
    if isinstance(adapter, SupportsLookup):
        ways.append("looked up (exact)" if adapter.lookup_is_strong else "looked up (best effort)")
    ways.append("a person")
    return "ambiguous; then " + ", then ".join(ways)


def _delete(caps: PlatformCapabilities) -> str:
    if caps.delete_supported:
        return f"yes: {caps.delete_detail}"
    if caps.delete_why == "platform":
        return f"no, the platform's API cannot: {caps.delete_detail}"
    return f"not built: {caps.delete_detail}"


def _asynchronous(adapter: Adapter, caps: PlatformCapabilities) -> str:
    kinds = ", ".join(caps.raw.get("async_for") or ()) or "a post answered as still processing"
    schedule = getattr(adapter, "poll_schedule", None)
    if isinstance(adapter, SupportsStatusPoll) and schedule is not None:
        budget = _duration(timedelta(seconds=schedule.max_wait_s))
        return f"{kinds}: `waiting`, polled for up to {budget}"
    if caps.async_publish:
        return f"{kinds}: processed before the post is sent, inside the attempt"
    return "none"


def _duration(value: timedelta | None) -> str:
    seconds = int(value.total_seconds()) if value else 0
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if unit == 'day' and count > 1 else ''}"
    return f"{seconds} s"

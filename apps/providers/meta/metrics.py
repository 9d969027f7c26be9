"""Reading Meta's insights edges (Threads, Instagram, Facebook share the shape): each
metric a `data` entry with `values[0].value` (lifetime) or `total_value.value`."""

from __future__ import annotations

from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.meta.graph import graph_call, graph_client
from apps.providers.metrics import count

# The permission errors that hide insights but leave the post's public counts readable.
HIDDEN = (ErrorKind.PERMISSION_MISSING, ErrorKind.PLAN_RESTRICTED)


def insight_values(body: dict) -> dict[str, int]:
    values: dict[str, int] = {}
    for entry in body.get("data") or []:
        total = (entry.get("total_value") or {}).get("value")
        if total is None and entry.get("values"):
            total = entry["values"][0].get("value")
        value = count(total)
        if value is not None:
            values[str(entry.get("name"))] = value
    return values


def read_insights(access_token: str, url: str, metrics: list[str]) -> dict[str, int] | None:
    """The insights, or None when the token lacks the insights permission (the caller
    notes the gap and keeps the public counts)."""
    try:
        with graph_client(access_token) as http:
            body = graph_call(
                http, "GET", url, is_create=False, params={"metric": ",".join(metrics)}
            )
    except ProviderError as exc:
        if exc.kind in HIDDEN:
            return None
        raise
    return insight_values(body)


def read_fields(access_token: str, url: str, fields: str) -> dict:
    with graph_client(access_token) as http:
        return graph_call(http, "GET", url, is_create=False, params={"fields": fields})

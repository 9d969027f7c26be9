"""The read side of a platform: a published post's public metrics and an account's
follower count.

Each platform package may hold a `metrics.py` that defines a reader and registers it with
`register_reader(...)`; `get_reader` imports them all on first use, as `adapters.py` does
for adapters. A reader declares what its platform offers (`Offers`), so a metric the
platform has no API for, or that needs a permission the connection may lack, is shown as
"not offered" with its reason, never as a zero. Reads are never creates: a transport
failure is "before send" and may be retried, and they raise the same `ProviderError`s as
the adapters (429 carries its `retry_at`).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import httpx

import apps.providers
from apps.providers import httpcall
from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.errors import ProviderError

# The metrics shared by every platform (a reader names what it offers among them).
POST_METRICS = ("likes", "replies", "reposts", "views", "clicks")
FOLLOWERS = "followers"

# Why a metric is missing (the values of apps.analytics.models.MetricGap.Reason).
NOT_OFFERED = "not_offered"
PERMISSION = "permission_missing"
ACCOUNT_TYPE = "account_type"


@dataclass(frozen=True)
class Offers:
    """What a platform's API lets us read.

    `post`: the shared metrics a post read returns. `needs_permission`: those of them only
    a token with an extra scope gets (metric -> the scope). `followers`: whether an
    account's follower count can be read. `read_cost`: units one read spends of the
    platform's budget (YouTube's quota units; 1 elsewhere). `billed`: reads cost money
    (X's pay-per-use API): off unless the operator switches them on. `notes`: one line per
    metric we cannot get, for the pages and docs/analytics.md."""

    post: frozenset[str]
    followers: bool
    needs_permission: dict[str, str] = field(default_factory=dict)
    read_cost: int = 1
    billed: bool = False
    notes: dict[str, str] = field(default_factory=dict)

    def missing(self) -> dict[str, str]:
        """The shared metrics the platform never offers, each with NOT_OFFERED."""
        return {name: NOT_OFFERED for name in POST_METRICS if name not in self.post}


@dataclass(frozen=True)
class PostMetrics:
    """One read of a post. A shared metric is None when not offered; `gaps` says why
    (metric -> NOT_OFFERED, PERMISSION, ACCOUNT_TYPE). `extra` keeps the platform's other
    counts (quotes, saves, bookmarks, score)."""

    likes: int | None = None
    replies: int | None = None
    reposts: int | None = None
    views: int | None = None
    clicks: int | None = None
    extra: dict[str, int] = field(default_factory=dict)
    gaps: dict[str, str] = field(default_factory=dict)

    def values(self) -> dict[str, int | None]:
        return {name: getattr(self, name) for name in POST_METRICS}


@dataclass(frozen=True)
class Followers:
    """One read of an account's follower count (None with `gap` when not offered)."""

    count: int | None
    gap: str = ""
    detail: str = ""


@runtime_checkable
class MetricsReader(Protocol):
    """A platform's read side. `read_post_metrics` reads the post `post` names (its root
    segment); `read_followers` the follower count of `ctx.account` (a context with no
    rendition: credentials a reader refreshes reach `ctx.persist_credentials`)."""

    platform: str
    offers: Offers

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics: ...

    def read_followers(self, ctx: PublishContext) -> Followers: ...


_READERS: dict[str, MetricsReader] = {}
_loaded = False


def register_reader(reader: MetricsReader) -> MetricsReader:
    _READERS[reader.platform] = reader
    return reader


def _load() -> None:
    """Import every `apps.providers.<platform>.metrics` module (each registers itself)."""
    global _loaded
    if _loaded:
        return
    for root in apps.providers.__path__:
        for folder in sorted(Path(root).iterdir()):
            if not folder.is_dir() or folder.name.startswith(("_", ".")):
                continue
            if any(m.name == "metrics" for m in pkgutil.iter_modules([str(folder)])):
                importlib.import_module(f"{apps.providers.__name__}.{folder.name}.metrics")
    _loaded = True


def get_reader(platform: str) -> MetricsReader | None:
    """The platform's reader, or None where the platform has none."""
    _load()
    return _READERS.get(platform)


def readers() -> dict[str, MetricsReader]:
    _load()
    return dict(_READERS)


def get_json(
    http: httpx.Client,
    url: str,
    *,
    classify,
    params: dict | None = None,
    method: str = "GET",
    **kwargs,
) -> dict:
    """One read: the answer's JSON object, or the platform's classified error. Reads are
    never creates, so a lost answer is safe to ask again."""
    response = httpcall.send(http, method, url, is_create=False, params=params, **kwargs)
    if response.status_code >= 400:
        error = classify(response, is_create=False)
        if not isinstance(error, ProviderError):  # pragma: no cover - classify's contract
            raise TypeError("classify must return a ProviderError")
        raise error
    return httpcall.json_body(response)


def count(value: object) -> int | None:
    """A platform's count as an int (some send strings: YouTube), None when absent."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None

"""Domain events: an app says what happened, by name, and the apps that react subscribe.

A domain app calls ``emit(RENDITION_PUBLISHED, rendition=rendition)`` where the thing
happens, in the transaction that makes it true, and never imports the apps that react.
Those subscribe from their ``AppConfig.ready()``, in one of two ways:

- ``subscribe(name, handler)``: the handler runs once the emitting transaction commits
  (``transaction.on_commit``), and never if it rolls back. Outside a transaction it runs at
  once, as ``on_commit`` does.
- ``subscribe(name, handler, in_transaction=True)``: the handler runs inside ``emit``, in
  the emitter's transaction. This is for outboxes: the webhooks app writes its event,
  delivery and job rows here, so they commit with the domain write or not at all (a
  webhook is never lost, nor sent for a write that was undone), and the delivery jobs run
  once the commit has made them visible to the workers.

Delivery is robust: a handler that raises is logged with its traceback, and the others
still run; the emitter never sees the error. An in-transaction handler runs in a
savepoint, so a failing one leaves the emitter's transaction usable and its own writes
undone. Handlers get the payload as keyword arguments, and run in subscription order.

Every event is listed below with its payload. An unknown name raises ValueError and a
payload with other keys raises TypeError, so a typo fails in tests, not silently in
production.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

logger = logging.getLogger(__name__)

# The rendition is live: published by the worker, found by reconciliation, or resolved as
# published by a person. Payload: rendition.
RENDITION_PUBLISHED = "rendition.published"
# The rendition was just marked failed: for good, with an automatic retry pending
# (``rendition.is_retry_pending``), or with an unknown outcome (``rendition.ambiguous``).
# Payload: rendition.
RENDITION_FAILED = "rendition.failed"
# The publication's aggregate status changed (emitted only on a change). Payload:
# publication, previous (the old status), status (the new one).
PUBLICATION_STATUS_CHANGED = "publication.status_changed"
# A connected account's token expired or was revoked: a person must reconnect it (emitted
# when the account changes, not for every rendition that finds it so). Payload: account.
ACCOUNT_NEEDS_RECONNECT = "account.needs_reconnect"

PAYLOADS: dict[str, frozenset[str]] = {
    RENDITION_PUBLISHED: frozenset({"rendition"}),
    RENDITION_FAILED: frozenset({"rendition"}),
    PUBLICATION_STATUS_CHANGED: frozenset({"publication", "previous", "status"}),
    ACCOUNT_NEEDS_RECONNECT: frozenset({"account"}),
}

Handler = Callable[..., Any]


@dataclass(frozen=True)
class _Subscriber:
    handler: Handler
    in_transaction: bool


_subscribers: dict[str, list[_Subscriber]] = {name: [] for name in PAYLOADS}


def _check_name(name: str) -> None:
    if name not in PAYLOADS:
        raise ValueError(f"Unknown event {name!r}; known: {', '.join(sorted(PAYLOADS))}.")


def subscribe(name: str, handler: Handler, *, in_transaction: bool = False) -> None:
    """Call `handler(**payload)` for every `name` event: after the commit, or inside the
    emitter's transaction when `in_transaction` (see the module docstring). Subscribing
    the same handler twice is a no-op."""
    _check_name(name)
    subscriber = _Subscriber(handler=handler, in_transaction=in_transaction)
    if subscriber not in _subscribers[name]:
        _subscribers[name].append(subscriber)


def emit(name: str, **payload: Any) -> None:
    """Tell the subscribers of `name` that it happened: in-transaction ones now, the
    others when the current transaction commits (at once outside a transaction)."""
    _check_name(name)
    if set(payload) != PAYLOADS[name]:
        raise TypeError(
            f"Event {name!r} takes {sorted(PAYLOADS[name])} as payload, not {sorted(payload)}."
        )
    for subscriber in list(_subscribers[name]):
        if subscriber.in_transaction:
            _deliver(name, subscriber.handler, payload, in_savepoint=True)
        else:
            transaction.on_commit(
                functools.partial(_deliver, name, subscriber.handler, payload, in_savepoint=False)
            )


def _deliver(name: str, handler: Handler, payload: dict, *, in_savepoint: bool) -> None:
    try:
        if in_savepoint:
            with transaction.atomic():
                handler(**payload)
        else:
            handler(**payload)
    except Exception:
        subscriber = getattr(handler, "__qualname__", repr(handler))
        logger.exception(
            "Subscriber %s of event %s failed; the other subscribers still run.",
            subscriber,
            name,
            extra={"event": name, "subscriber": subscriber},
        )

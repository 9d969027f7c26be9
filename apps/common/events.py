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

Many at once: ``emit_many(name, payloads)`` is ``emit`` for each payload, for a bulk write.
A subscriber that passed ``many=`` gets the whole list in one call (``many(payloads)``, in
one savepoint when in-transaction), so it can do its work in a few statements; if that
call raises, each payload goes to ``handler`` in turn, so one bad payload costs only its
own delivery, as with ``emit``. The others get one ``handler`` call per payload. Each
subscriber sees the payloads in their order, one subscriber after the other.

Every event is listed below with its payload. An unknown name raises ValueError and a
payload with other keys raises TypeError, so a typo fails in tests, not silently in
production.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
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
# A publication's review moved: submitted for review, approved (and so scheduled) or sent
# back with changes requested. Payload: publication, review (its state now), actor (the
# person), note (what they wrote, maybe empty).
PUBLICATION_REVIEW_CHANGED = "publication.review_changed"
# A workspace's approval rule was switched on or off. Payload: workspace, required, actor.
APPROVAL_RULE_CHANGED = "approval.rule_changed"
# A client link (apps.approvals.portal) was made or revoked by a member. Payload: link,
# actor. Someone opened one (its page of posts). Payload: link.
PORTAL_LINK_CREATED = "portal.link_created"
PORTAL_LINK_REVOKED = "portal.link_revoked"
PORTAL_VIEWED = "portal.viewed"
# A media file's default alt text changed while posts past draft use it without alt text
# of their own, so what they show changed with it. Payload: asset, previous (the old alt
# text), publications (their ids), actor.
MEDIA_ALT_TEXT_CHANGED = "media.alt_text_changed"

# Who belongs where (apps/accounts). ``actor`` is the user who did it, or None for an
# operator (the admin, a command). An organization-wide change has ``workspace`` None.
# An invitation was created or resent (``resent``): a link was emailed. Payload: invitation,
# actor, resent.
MEMBER_INVITED = "member.invited"
# The invited person accepted: they hold the invitation's role now. Payload: invitation, user.
MEMBER_INVITE_ACCEPTED = "member.invite_accepted"
# An invitation was revoked before it was accepted. Payload: invitation, actor.
MEMBER_INVITE_REVOKED = "member.invite_revoked"
# Someone was given a role where they had none (accepting an invitation, an owner adding an
# organization member to a workspace, an operator). Payload: organization, workspace, user,
# role, actor.
MEMBER_ADDED = "member.added"
# A member's role changed. Payload: organization, workspace, user, previous, role, actor,
# tokens (what it did to the person's API tokens: TokenChange.as_record() dicts).
MEMBER_ROLE_CHANGED = "member.role_changed"
# A member was removed from one workspace, or from the organization and all its workspaces
# (workspace None). Payload: organization, workspace, user, actor, tokens (as above).
MEMBER_REMOVED = "member.removed"
# A person proved they receive mail at their address. Payload: user, method
# ("link", "password_reset", "invitation", "operator").
USER_EMAIL_VERIFIED = "user.email_verified"

# Security events beside membership: what a person (or a token) changed about who may do
# what. The audit log records each; who acted comes from the request (apps.audit).
# An API token was minted or revoked (revoking also revokes its descendants). Payload: token.
TOKEN_CREATED = "token.created"
TOKEN_REVOKED = "token.revoked"
# A social account was connected (or reconnected), or disconnected (emitted before a
# deletion, so the row is still readable). Payload: account.
ACCOUNT_CONNECTED = "account.connected"
ACCOUNT_DISCONNECTED = "account.disconnected"
# A webhook endpoint was registered, changed (changes: the names of the changed fields),
# had its secret rotated, or was deleted (emitted before the deletion). Payload: endpoint
# (and changes).
WEBHOOK_CREATED = "webhook.created"
WEBHOOK_UPDATED = "webhook.updated"
WEBHOOK_SECRET_ROTATED = "webhook.secret_rotated"
WEBHOOK_DELETED = "webhook.deleted"
# A person settled an ambiguous delivery: outcome is published, failed or retry.
# Payload: rendition, outcome.
RENDITION_RESOLVED = "rendition.resolved"
# A user switched two-factor authentication on or off. Payload: user.
TWO_FACTOR_ENABLED = "user.two_factor_enabled"
TWO_FACTOR_DISABLED = "user.two_factor_disabled"

# The inbox (apps/inbox): a comment by someone else was read under one of our posts, or a
# reply sent from the inbox was posted. Payload: comment (its ``event_data()`` is what a
# receiver is told) / reply (likewise).
COMMENT_RECEIVED = "comment.received"
COMMENT_REPLIED = "comment.replied"

# A published post's engagement (likes + replies + reposts, as apps/analytics reads it)
# reached one of ANALYTICS_ENGAGEMENT_THRESHOLDS, once per threshold. Payload: rendition,
# threshold, engagement.
POST_ENGAGEMENT_REACHED = "post.engagement_reached"

PAYLOADS: dict[str, frozenset[str]] = {
    RENDITION_PUBLISHED: frozenset({"rendition"}),
    RENDITION_FAILED: frozenset({"rendition"}),
    PUBLICATION_STATUS_CHANGED: frozenset({"publication", "previous", "status"}),
    ACCOUNT_NEEDS_RECONNECT: frozenset({"account"}),
    PUBLICATION_REVIEW_CHANGED: frozenset({"publication", "review", "actor", "note"}),
    APPROVAL_RULE_CHANGED: frozenset({"workspace", "required", "actor"}),
    PORTAL_LINK_CREATED: frozenset({"link", "actor"}),
    PORTAL_LINK_REVOKED: frozenset({"link", "actor"}),
    PORTAL_VIEWED: frozenset({"link"}),
    MEDIA_ALT_TEXT_CHANGED: frozenset({"asset", "previous", "publications", "actor"}),
    MEMBER_INVITED: frozenset({"invitation", "actor", "resent"}),
    MEMBER_INVITE_ACCEPTED: frozenset({"invitation", "user"}),
    MEMBER_INVITE_REVOKED: frozenset({"invitation", "actor"}),
    MEMBER_ADDED: frozenset({"organization", "workspace", "user", "role", "actor"}),
    MEMBER_ROLE_CHANGED: frozenset(
        {"organization", "workspace", "user", "previous", "role", "actor", "tokens"}
    ),
    MEMBER_REMOVED: frozenset({"organization", "workspace", "user", "actor", "tokens"}),
    USER_EMAIL_VERIFIED: frozenset({"user", "method"}),
    TOKEN_CREATED: frozenset({"token"}),
    TOKEN_REVOKED: frozenset({"token"}),
    ACCOUNT_CONNECTED: frozenset({"account"}),
    ACCOUNT_DISCONNECTED: frozenset({"account"}),
    WEBHOOK_CREATED: frozenset({"endpoint"}),
    WEBHOOK_UPDATED: frozenset({"endpoint", "changes"}),
    WEBHOOK_SECRET_ROTATED: frozenset({"endpoint"}),
    WEBHOOK_DELETED: frozenset({"endpoint"}),
    RENDITION_RESOLVED: frozenset({"rendition", "outcome"}),
    TWO_FACTOR_ENABLED: frozenset({"user"}),
    TWO_FACTOR_DISABLED: frozenset({"user"}),
    COMMENT_RECEIVED: frozenset({"comment"}),
    COMMENT_REPLIED: frozenset({"reply"}),
    POST_ENGAGEMENT_REACHED: frozenset({"rendition", "threshold", "engagement"}),
}

Handler = Callable[..., Any]
BatchHandler = Callable[[list[dict[str, Any]]], Any]


@dataclass(frozen=True)
class _Subscriber:
    handler: Handler
    in_transaction: bool
    many: BatchHandler | None = None


_subscribers: dict[str, list[_Subscriber]] = {name: [] for name in PAYLOADS}


def _check_name(name: str) -> None:
    if name not in PAYLOADS:
        raise ValueError(f"Unknown event {name!r}; known: {', '.join(sorted(PAYLOADS))}.")


def subscribe(
    name: str,
    handler: Handler,
    *,
    in_transaction: bool = False,
    many: BatchHandler | None = None,
) -> None:
    """Call `handler(**payload)` for every `name` event: after the commit, or inside the
    emitter's transaction when `in_transaction` (see the module docstring). `many`, when
    given, takes the payloads of one `emit_many` as a list, with the same effect as
    `handler` on each. Subscribing the same handler twice is a no-op."""
    _check_name(name)
    subscriber = _Subscriber(handler=handler, in_transaction=in_transaction, many=many)
    if subscriber not in _subscribers[name]:
        _subscribers[name].append(subscriber)


def emit(name: str, **payload: Any) -> None:
    """Tell the subscribers of `name` that it happened: in-transaction ones now, the
    others when the current transaction commits (at once outside a transaction)."""
    _check_name(name)
    _check_payload(name, payload)
    for subscriber in list(_subscribers[name]):
        if subscriber.in_transaction:
            _deliver(name, subscriber.handler, payload, in_savepoint=True)
        else:
            transaction.on_commit(
                functools.partial(_deliver, name, subscriber.handler, payload, in_savepoint=False)
            )


def emit_many(name: str, payloads: Iterable[dict[str, Any]]) -> None:
    """`emit(name, **payload)` for each payload, in one call per subscriber that takes
    batches (see the module docstring). Every payload is checked before any is delivered."""
    _check_name(name)
    batch = [dict(payload) for payload in payloads]
    for payload in batch:
        _check_payload(name, payload)
    if not batch:
        return
    for subscriber in list(_subscribers[name]):
        if subscriber.in_transaction:
            _deliver_many(name, subscriber, batch)
        else:
            transaction.on_commit(functools.partial(_deliver_many, name, subscriber, batch))


def _check_payload(name: str, payload: dict[str, Any]) -> None:
    if set(payload) != PAYLOADS[name]:
        raise TypeError(
            f"Event {name!r} takes {sorted(PAYLOADS[name])} as payload, not {sorted(payload)}."
        )


def _deliver_many(name: str, subscriber: _Subscriber, batch: list[dict[str, Any]]) -> None:
    in_savepoint = subscriber.in_transaction
    if subscriber.many is not None:
        try:
            if in_savepoint:
                with transaction.atomic():
                    subscriber.many(batch)
            else:
                subscriber.many(batch)
            return
        except Exception:
            # One payload can spoil the batch: deliver them one by one instead.
            _log_failure(name, subscriber.many, batch_size=len(batch))
    for payload in batch:
        _deliver(name, subscriber.handler, payload, in_savepoint=in_savepoint)


def _deliver(name: str, handler: Handler, payload: dict, *, in_savepoint: bool) -> None:
    try:
        if in_savepoint:
            with transaction.atomic():
                handler(**payload)
        else:
            handler(**payload)
    except Exception:
        _log_failure(name, handler)


def _log_failure(name: str, handler: Callable[..., Any], *, batch_size: int | None = None) -> None:
    subscriber = getattr(handler, "__qualname__", repr(handler))
    if batch_size is None:
        message = "Subscriber %s of event %s failed; the other subscribers still run."
    else:
        message = "Subscriber %s of event %s failed on a batch; delivering one by one."
    logger.exception(message, subscriber, name, extra={"event": name, "subscriber": subscriber})

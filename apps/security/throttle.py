"""Throttling and lockout of the sign-in pages, per account and per IP address.

Each attempt is recorded before it is checked (two `AuthAttempt` rows, committed at once),
then the rows of the window are counted: concurrent attempts see each other, so a burst
cannot slip past the limit. A refused attempt deletes its rows again, so hammering a locked
account does not extend its lockout: it ends on its own once its failures age out of the
window. A login or code that succeeds deletes its rows, so only failures count there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.security.models import AuthAttempt

Action = AuthAttempt.Action
Scope = AuthAttempt.Scope


@dataclass(frozen=True)
class Rule:
    """At most `per_account` and `per_ip` attempts of an action within `window`."""

    per_account: int
    per_ip: int
    window: timedelta


def rule_for(action: str) -> Rule:
    window = timedelta(minutes=settings.AUTH_LOCKOUT_MINUTES)
    if action in (Action.LOGIN, Action.TWO_FACTOR):
        return Rule(settings.AUTH_LOCKOUT_ATTEMPTS, settings.AUTH_LOCKOUT_IP_ATTEMPTS, window)
    # Each of these sends an email (or creates an account): fewer, over an hour at least.
    return Rule(
        settings.AUTH_EMAIL_REQUESTS,
        settings.AUTH_EMAIL_IP_REQUESTS,
        max(window, timedelta(hours=1)),
    )


class Throttled(Exception):
    """Too many attempts; the next one is allowed in `retry_after_s` seconds."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"Too many attempts; retry in {retry_after_s} s.")
        self.retry_after_s = max(1, retry_after_s)

    @property
    def message(self) -> str:
        minutes = max(1, math.ceil(self.retry_after_s / 60))
        unit = "minute" if minutes == 1 else "minutes"
        return f"Too many attempts. Try again in {minutes} {unit}."


@dataclass
class Attempt:
    """A recorded attempt, to be called `succeeded()` when it turned out right."""

    action: str
    account: str
    row_ids: list[int]

    def succeeded(self) -> None:
        """Forget this attempt and the account's earlier failures of the same action."""
        AuthAttempt.objects.filter(pk__in=self.row_ids).delete()
        if self.account:
            AuthAttempt.objects.filter(
                action=self.action, scope=Scope.ACCOUNT, key=self.account
            ).delete()


def attempt_begin(*, action: str, account: str, ip: str) -> Attempt:
    """Record an attempt of `action` for `account` (may be empty) from `ip`.

    Raises Throttled, leaving nothing recorded, when the account or the address already
    made the rule's number of attempts within its window.
    """
    rule = rule_for(action)
    now = timezone.now()
    account = account.strip().lower()[:254]
    _sweep(now)
    keyed = [(Scope.IP, ip, rule.per_ip)]
    if account:
        keyed.insert(0, (Scope.ACCOUNT, account, rule.per_account))
    rows = AuthAttempt.objects.bulk_create(
        [
            AuthAttempt(action=action, scope=scope, key=key, created_at=now)
            for scope, key, _ in keyed
        ]
    )
    row_ids = [row.pk for row in rows]
    waits = [
        _wait(action=action, scope=scope, key=key, limit=limit, rule=rule, now=now, mine=row_ids)
        for scope, key, limit in keyed
    ]
    if any(waits):
        AuthAttempt.objects.filter(pk__in=row_ids).delete()
        raise Throttled(max(waits))
    return Attempt(action=action, account=account, row_ids=row_ids)


def _wait(
    *, action: str, scope: str, key: str, limit: int, rule: Rule, now, mine: list[int]
) -> int:
    """Seconds until `key` may try again (0: now). The others' attempts in the window,
    newest first: with `limit` of them, this one waits until the limit-th ages out."""
    earlier = list(
        AuthAttempt.objects.filter(
            action=action, scope=scope, key=key, created_at__gt=now - rule.window
        )
        .exclude(pk__in=mine)
        .order_by("-created_at")
        .values_list("created_at", flat=True)[:limit]
    )
    if len(earlier) < limit:
        return 0
    return math.ceil((earlier[-1] + rule.window - now).total_seconds())


def _sweep(now) -> None:
    """Delete attempts older than every window (an indexed range delete, usually empty)."""
    longest = max(rule_for(action).window for action in Action.values)
    AuthAttempt.objects.filter(created_at__lt=now - longest).delete()

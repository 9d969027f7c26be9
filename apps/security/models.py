"""Abuse counters of the sign-in pages and the web app, and people's second factors."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class AuthAttempt(models.Model):
    """One counted attempt at a sign-in page: a login or two-factor code (deleted again when
    it succeeds, so only failures remain), or a password reset or signup request.

    Two rows per attempt, one keyed by the account (the address typed, or the user) and one
    by the client's IP address; `apps.security.throttle` counts them over a sliding window
    and deletes rows older than the longest window.
    """

    class Action(models.TextChoices):
        LOGIN = "login"
        TWO_FACTOR = "two_factor"
        PASSWORD_RESET = "password_reset"
        SIGNUP = "signup"

    class Scope(models.TextChoices):
        ACCOUNT = "account"
        IP = "ip"

    action = models.CharField(max_length=20, choices=Action.choices)
    scope = models.CharField(max_length=10, choices=Scope.choices)
    key = models.CharField(max_length=254, help_text="The address typed, a user id, or an IP.")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            # The window count: attempts of one action and key since a moment.
            models.Index(
                fields=["action", "scope", "key", "created_at"], name="security_attempt_window"
            ),
            # The sweep of rows older than every window.
            models.Index(fields=["created_at"], name="security_attempt_created"),
        ]

    def __str__(self) -> str:
        return f"{self.action} by {self.scope} {self.key} at {self.created_at:%Y-%m-%d %H:%M}"


class RateCounter(models.Model):
    """Web app writes by one person or IP address in one fixed window (WEB_RATE_LIMIT).

    Incremented with one upsert per request (`apps.security.ratelimit`); windows that ended
    are deleted when the next one opens.
    """

    key = models.CharField(max_length=100)
    window_start = models.DateTimeField()
    hits = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["key", "window_start"], name="rate_counter_unique")
        ]
        indexes = [models.Index(fields=["window_start"], name="rate_counter_window")]

    def __str__(self) -> str:
        return f"{self.key}: {self.hits} since {self.window_start:%H:%M:%S}"


class TotpDevice(models.Model):
    """A person's authenticator app (RFC 6238 TOTP). The secret is sealed with the
    ENCRYPTION_KEYS ring. It guards logins once confirmed; an unconfirmed device is an
    enrollment in progress and guards nothing.

    `last_used_step` is the time step of the last accepted code: a code is accepted once.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="totp_device"
    )
    secret_key_id = models.CharField(max_length=32)
    secret_ciphertext = models.BinaryField(editable=False)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    last_used_step = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        state = "on" if self.is_confirmed else "enrolling"
        return f"Two-factor of {self.user} ({state})"

    @property
    def is_confirmed(self) -> bool:
        return self.confirmed_at is not None


class RecoveryCode(models.Model):
    """A single-use code that stands in for the authenticator app. Only its SHA-256 is
    kept (the code is random and long, so a slow hash adds nothing); it is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="recovery_codes"
    )
    code_hash = models.CharField(max_length=64)
    used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "code_hash"], name="recovery_code_unique")
        ]

    def __str__(self) -> str:
        return f"Recovery code of {self.user} ({'used' if self.used_at else 'unused'})"

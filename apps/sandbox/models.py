"""The sandbox platform's own storage: what a fake social network keeps.

These rows are the platform's side of the world, not ours: the sandbox stores every post
it accepts, so tests and the soak count duplicates in its store, never in our rows.
The tables keep the names they had when the sandbox lived inside the providers app.
"""

import secrets

from django.db import models
from django.utils import timezone


def _token() -> str:
    return secrets.token_urlsafe(24)


class SandboxAccount(models.Model):
    """An account on the sandbox platform, with the behaviour it was told to show.

    `counters` holds how many more times each counted misbehaviour (rate_limit_times,
    server_error_times, hang_after_accept_times) will happen; each use decrements it.
    The account belongs to the workspace that opened it: only that workspace sees what it
    holds, and its handle is unique within that workspace.
    """

    workspace = models.ForeignKey(
        "accounts.Workspace", on_delete=models.CASCADE, related_name="sandbox_accounts"
    )
    handle = models.CharField(max_length=100)
    behaviour = models.JSONField(default=dict, blank=True)
    counters = models.JSONField(default=dict, blank=True)
    access_token = models.CharField(max_length=64, default=_token)
    refresh_token = models.CharField(max_length=64, default=_token)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "providers_sandboxaccount"
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "handle"], name="sandbox_account_handle_per_workspace"
            )
        ]

    def __str__(self) -> str:
        return f"sandbox:{self.handle}"


class SandboxMedia(models.Model):
    """Media uploaded to the sandbox (its bytes are counted, not kept)."""

    account = models.ForeignKey(SandboxAccount, on_delete=models.CASCADE, related_name="media")
    size_bytes = models.PositiveBigIntegerField()
    mime_type = models.CharField(max_length=100, blank=True)
    alt_text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "providers_sandboxmedia"

    def __str__(self) -> str:
        return f"sandbox media {self.pk}"


class SandboxPost(models.Model):
    """A post the sandbox accepted. Several rows with one idempotency key are duplicates."""

    account = models.ForeignKey(SandboxAccount, on_delete=models.CASCADE, related_name="posts")
    text = models.TextField(blank=True)
    idempotency_key = models.CharField(max_length=200, blank=True, db_index=True)
    reply_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replies"
    )
    # A comment under `reply_to` (a first comment), not a post of a thread.
    is_comment = models.BooleanField(default=False)
    media = models.ManyToManyField(SandboxMedia, blank=True)
    # Asynchronous processing: published from `ready_at` on (null: at once), unless its
    # processing fails, in which case the platform never shows it.
    ready_at = models.DateTimeField(null=True, blank=True)
    processing_fails = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "providers_sandboxpost"
        ordering = ["id"]

    def __str__(self) -> str:
        return f"sandbox post {self.pk}"

    @property
    def status(self) -> str:
        if self.ready_at is not None and timezone.now() < self.ready_at:
            return "processing"
        return "failed" if self.processing_fails else "published"

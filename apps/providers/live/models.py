"""The record of one live validation run."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import models
from django.db.models import Q

from apps.accounts.models import SocialAccount

# A platform is `supported` only while its newest passing validation is younger than this:
# platforms change their APIs, and an old proof proves little about today's behaviour.
VALIDATION_MAX_AGE = timedelta(days=90)


class PlatformValidationQuerySet(models.QuerySet):
    def current(self, *, now: datetime) -> PlatformValidationQuerySet:
        """Passing validations young enough to count, the newest per platform first."""
        return self.filter(passed=True, finished_at__gt=now - VALIDATION_MAX_AGE).order_by(
            "platform", "-finished_at"
        )


class PlatformValidation(models.Model):
    """One run of `validate_platform` against a live platform with an operator's account.

    `steps` lists each step in order as {"name", "status", "detail"}, where status is
    passed, failed, not_offered (the platform or our adapter has no such thing) or skipped
    (an earlier step it needs failed). `passed` is true when every offered step passed.
    `leftovers` lists what the run made and could not delete, for the operator to remove.
    Rows are written once, by the run, and never changed.
    """

    class StepStatus(models.TextChoices):
        PASSED = "passed"
        FAILED = "failed"
        NOT_OFFERED = "not_offered"
        SKIPPED = "skipped"

    platform = models.CharField(max_length=32)
    api_version = models.CharField(max_length=64, blank=True)
    account = models.ForeignKey(
        SocialAccount, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Kept apart from the account, which may be disconnected later.
    account_handle = models.CharField(max_length=255)
    operator = models.CharField(max_length=150, blank=True)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    steps = models.JSONField(default=list)
    passed = models.BooleanField(default=False)
    leftovers = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = PlatformValidationQuerySet.as_manager()

    class Meta:
        app_label = "providers"
        indexes = [
            # The catalog's readiness: the newest passing validation per platform.
            models.Index(
                fields=["platform", "-finished_at"],
                condition=Q(passed=True),
                name="providers_validation_passing",
            )
        ]

    def __str__(self) -> str:
        verdict = "passed" if self.passed else "failed"
        return f"{self.platform} validation {verdict} {self.finished_at:%Y-%m-%d}"

    @property
    def steps_passed(self) -> list[str]:
        return [s["name"] for s in self.steps if s.get("status") == self.StepStatus.PASSED]

    def is_current(self, *, now: datetime) -> bool:
        return self.passed and self.finished_at > now - VALIDATION_MAX_AGE

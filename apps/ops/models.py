"""The operators' maintenance switch."""

from django.db import models


class MaintenanceSwitch(models.Model):
    """The maintenance toggle operators flip in the admin: a single row (pk=1).

    Maintenance is on when this row says so *or* the MAINTENANCE_MODE setting is true.
    While on, web and API writes answer 503; reads, the admin and the workers go on.
    """

    SINGLETON_PK = 1

    id = models.PositiveSmallIntegerField(primary_key=True, default=SINGLETON_PK, editable=False)
    is_enabled = models.BooleanField(
        default=False, help_text="Refuse web and API writes with 503 while workers keep going."
    )
    message = models.CharField(
        max_length=500,
        blank=True,
        help_text="Shown to users and API clients. Blank: a standard message.",
    )
    retry_after_s = models.PositiveIntegerField(
        default=300, help_text="Seconds sent in the Retry-After header of refused writes."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "maintenance mode"
        verbose_name_plural = "maintenance mode"
        constraints = [
            models.CheckConstraint(condition=models.Q(id=1), name="ops_maintenance_singleton"),
        ]

    def __str__(self) -> str:
        return "Maintenance mode: " + ("on" if self.is_enabled else "off")

    @classmethod
    def load(cls) -> "MaintenanceSwitch":
        """The one row, created (switched off) on first use."""
        switch, _ = cls.objects.get_or_create(pk=cls.SINGLETON_PK)
        return switch

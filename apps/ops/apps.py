from django.apps import AppConfig


class OpsConfig(AppConfig):
    """Operating the service: health and readiness, maintenance mode, CSP, JSON logs."""

    name = "apps.ops"
    verbose_name = "Operations"
    default_auto_field = "django.db.models.BigAutoField"

from django.apps import AppConfig


class SandboxConfig(AppConfig):
    """The built-in fake social platform, served over HTTP under /sandbox/."""

    name = "apps.sandbox"
    default_auto_field = "django.db.models.BigAutoField"

from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class JobsConfig(AppConfig):
    name = "apps.jobs"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Jobs"

    def ready(self) -> None:
        # Job types register themselves on import: the jobs app's own, then every app's
        # `jobs.py`, so web processes, workers and commands all know every type.
        from apps.jobs import builtin  # noqa: F401

        autodiscover_modules("jobs")

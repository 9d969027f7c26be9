from django.apps import AppConfig


class PlanningConfig(AppConfig):
    name = "apps.planning"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Queue and posting slots"

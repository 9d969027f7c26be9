from django.apps import AppConfig


class SeriesConfig(AppConfig):
    name = "apps.series"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Recurring series"

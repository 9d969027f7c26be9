from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "apps.analytics"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Analytics"

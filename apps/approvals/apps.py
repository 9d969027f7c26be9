from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "apps.approvals"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "approvals"

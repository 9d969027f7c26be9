from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "apps.audit"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Audit log"

    def ready(self) -> None:
        from apps.audit import recorder

        recorder.connect()

from django.apps import AppConfig


class InboxConfig(AppConfig):
    name = "apps.inbox"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Inbox"

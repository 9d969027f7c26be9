from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "apps.webhooks"
    default_auto_field = "django.db.models.BigAutoField"

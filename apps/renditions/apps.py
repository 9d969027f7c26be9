from django.apps import AppConfig


class RenditionsConfig(AppConfig):
    name = "apps.renditions"
    default_auto_field = "django.db.models.BigAutoField"

from django.apps import AppConfig


class PublicationsConfig(AppConfig):
    name = "apps.publications"
    default_auto_field = "django.db.models.BigAutoField"

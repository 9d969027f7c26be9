from django.apps import AppConfig


class PublishingConfig(AppConfig):
    """The publish flow across publications and renditions: the writes that touch both,
    delivery to the platforms, and its job types. It owns no models."""

    name = "apps.publishing"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.common import events
        from apps.publishing.delivery.reconnect import reconcile_after_reconnect

        events.subscribe(events.ACCOUNT_CONNECTED, reconcile_after_reconnect)

from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "apps.analytics"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Analytics"

    def ready(self) -> None:
        from apps.analytics import services
        from apps.common import events

        # In the emitter's transaction: a published rendition never lacks its schedule.
        events.subscribe(
            events.RENDITION_PUBLISHED, services.metrics_schedule_start, in_transaction=True
        )
        events.subscribe(
            events.ACCOUNT_CONNECTED, services.followers_schedule_start, in_transaction=True
        )

from django.apps import AppConfig


class InboxConfig(AppConfig):
    name = "apps.inbox"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Inbox"

    def ready(self) -> None:
        from apps.common import events
        from apps.inbox.sync import sync_resume, sync_start

        # In the publishing transaction: a live post gets its read schedule with it.
        events.subscribe(events.RENDITION_PUBLISHED, sync_start, in_transaction=True)
        events.subscribe(events.ACCOUNT_CONNECTED, sync_resume)

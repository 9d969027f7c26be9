from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "apps.webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.accounts import key_rotation
        from apps.common import events
        from apps.webhooks import events as webhook_events
        from apps.webhooks.endpoints import webhook_secrets_rotate_keys

        # In the emitter's transaction: the event, delivery and job rows commit with the
        # domain write or not at all, and the delivery jobs run after the commit. A bulk
        # create's status changes come as one batch, recorded with one statement per table.
        subscriptions: list[tuple[str, events.Handler, events.BatchHandler | None]] = [
            (events.RENDITION_PUBLISHED, webhook_events.emit_rendition_published, None),
            (events.RENDITION_FAILED, webhook_events.emit_rendition_failure, None),
            (
                events.PUBLICATION_STATUS_CHANGED,
                webhook_events.emit_publication_status_change,
                webhook_events.emit_publication_status_changes,
            ),
            (events.ACCOUNT_NEEDS_RECONNECT, webhook_events.emit_account_needs_reconnect, None),
            (
                events.PUBLICATION_REVIEW_CHANGED,
                webhook_events.emit_publication_review_change,
                None,
            ),
            (events.COMMENT_RECEIVED, webhook_events.emit_comment_received, None),
            (events.POST_ENGAGEMENT_REACHED, webhook_events.emit_post_engagement_reached, None),
            (events.COMMENT_REPLIED, webhook_events.emit_comment_replied, None),
        ]
        for name, handler, many in subscriptions:
            events.subscribe(name, handler, in_transaction=True, many=many)
        key_rotation.register("webhook secret(s)", webhook_secrets_rotate_keys)

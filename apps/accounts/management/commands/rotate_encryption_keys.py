from django.core.management.base import BaseCommand

from apps.accounts import crypto, services
from apps.webhooks.services import webhook_secrets_rotate_keys


class Command(BaseCommand):
    help = (
        "Re-encrypt every social account's credentials and every webhook signing secret "
        "under the newest key in ENCRYPTION_KEYS. Run after putting a new key first; then "
        "the old one can go."
    )

    def handle(self, *args, **opts) -> None:
        accounts = services.encryption_keys_rotate()
        webhooks = webhook_secrets_rotate_keys()
        self.stdout.write(
            f"re-encrypted {accounts} account(s) and {webhooks} webhook secret(s) "
            f"under key '{crypto.current_key_id()}'"
        )

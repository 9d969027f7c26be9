from django.core.management.base import BaseCommand

from apps.accounts import crypto, services


class Command(BaseCommand):
    help = (
        "Re-encrypt every social account's credentials under the newest key in "
        "ENCRYPTION_KEYS. Run after putting a new key first; then the old one can go."
    )

    def handle(self, *args, **opts) -> None:
        changed = services.encryption_keys_rotate()
        self.stdout.write(
            f"re-encrypted {changed} account(s) under key '{crypto.current_key_id()}'"
        )

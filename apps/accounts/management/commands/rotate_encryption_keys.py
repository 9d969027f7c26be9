from django.core.management.base import BaseCommand

from apps.accounts import crypto, key_rotation


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored secret (social account credentials, webhook signing "
        "secrets, ...) under the newest key in ENCRYPTION_KEYS. Run after putting a new key "
        "first; then the old one can go."
    )

    def handle(self, *args, **opts) -> None:
        counts = " and ".join(f"{n} {what}" for what, n in key_rotation.rotate_all())
        self.stdout.write(f"re-encrypted {counts} under key '{crypto.current_key_id()}'")

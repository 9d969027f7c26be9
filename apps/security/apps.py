from django.apps import AppConfig


class SecurityConfig(AppConfig):
    name = "apps.security"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.accounts import key_rotation
        from apps.security.two_factor import totp_secrets_rotate_keys

        key_rotation.register("two-factor secret(s)", totp_secrets_rotate_keys)

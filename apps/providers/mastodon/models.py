"""The OAuth app this site registered on each Mastodon instance."""

from django.conf import settings
from django.db import models

from apps.accounts import crypto


class MastodonApp(models.Model):
    """Client credentials from `POST /api/v1/apps`, one row per instance, reused by every
    workspace connecting an account there. The client secret is sealed with the credential
    key ring, bound to the instance URL. Re-registered when the redirect URI or scopes change.
    """

    instance_url = models.URLField(unique=True, help_text="https://host, no trailing slash.")
    client_id = models.CharField(max_length=255)
    client_secret_key_id = models.CharField(max_length=32)
    client_secret_ciphertext = models.BinaryField(editable=False)
    redirect_uri = models.URLField(max_length=500)
    scopes = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "providers"

    def __str__(self) -> str:
        return f"mastodon app on {self.instance_url}"

    def _aad(self) -> bytes:
        return b"mastodon_app:" + self.instance_url.encode()

    @property
    def client_secret(self) -> str:
        sealed = crypto.Sealed(self.client_secret_key_id, bytes(self.client_secret_ciphertext))
        return crypto.unseal(sealed, aad=self._aad())["client_secret"]

    def set_client_secret(self, secret: str) -> None:
        sealed = crypto.seal({"client_secret": secret}, aad=self._aad())
        self.client_secret_key_id = sealed.key_id
        self.client_secret_ciphertext = sealed.ciphertext


class MastodonAppRegistration(models.Model):
    """One request this site made to register its app on an instance, and who asked for
    it. Anyone can type any server into the connect form, so registrations are capped per
    person (MASTODON_APP_REGISTRATIONS_PER_USER_DAY and _TOTAL): this site never becomes a
    tool for registering apps on thousands of servers. Logged before the call, so failed
    attempts count too (they reached the server all the same)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    instance_url = models.URLField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "providers"
        indexes = [
            # The cap's count: one person's registrations, the last day's first.
            models.Index(fields=["user", "-created_at"], name="mastodon_app_reg_user_recent")
        ]

    def __str__(self) -> str:
        return f"app registration on {self.instance_url} for user {self.user_id}"

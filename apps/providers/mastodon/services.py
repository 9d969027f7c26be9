"""Registering this site as an OAuth app on a Mastodon instance, once per instance."""

from __future__ import annotations

import re
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from apps.common import acting, outbound
from apps.common.errors import QuotaExceeded, ValidationFailed
from apps.providers import httpcall
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.mastodon.errors import classify
from apps.providers.mastodon.models import MastodonApp, MastodonAppRegistration

CLIENT_NAME = "Socialpost"
# Publishing needs the write scopes; reconciliation lists the account's own statuses and
# connecting reads the profile (verify_credentials).
SCOPES = "read:accounts read:statuses write:statuses write:media"

_HOST = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$")


def normalize_instance(raw: str) -> str:
    """'Mastodon.Social', 'https://mastodon.social/' and '@me@mastodon.social' all become
    'https://mastodon.social'. Only public HTTPS hosts are accepted."""
    value = (raw or "").strip().lower()
    if value.startswith("@") or ("@" in value and "://" not in value):
        value = value.rsplit("@", 1)[-1]
    value = value.removeprefix("https://").split("/", 1)[0]
    if not _HOST.match(value):
        raise ValidationFailed(
            "Enter the instance's domain, for example mastodon.social.",
            code="INVALID_INSTANCE",
            details={"instance": raw},
        )
    url = f"https://{value}"
    try:
        return httpcall.require_public_https(url)
    except outbound.ForbiddenTarget as exc:
        raise ValidationFailed(str(exc), code="INVALID_INSTANCE") from exc


def mastodon_app_get_or_register(*, instance_url: str, redirect_uri: str) -> MastodonApp:
    """The cached app for the instance, registering it (`POST /api/v1/apps`) when missing or
    when it was registered for another redirect URI or scope set."""
    app = MastodonApp.objects.filter(instance_url=instance_url).first()
    if app is not None and app.redirect_uri == redirect_uri and app.scopes == SCOPES:
        return app
    mastodon_registration_claim(instance_url=instance_url, user=acting.current().user)
    with httpcall.client(tenant_host=True) as http:
        response = httpcall.send(
            http,
            "POST",
            f"{instance_url}/api/v1/apps",
            is_create=False,  # an extra app registration is harmless
            data={
                "client_name": CLIENT_NAME,
                "redirect_uris": redirect_uri,
                "scopes": SCOPES,
                "website": settings.SITE_URL,
            },
        )
    if response.status_code != 200:
        raise classify(response, is_create=False)
    body = httpcall.json_body(response)
    if not body.get("client_id") or not body.get("client_secret"):
        raise ProviderError(
            ErrorKind.UNKNOWN, f"{instance_url} did not return app credentials.", http_status=200
        )
    return _store(instance_url, redirect_uri, body["client_id"], body["client_secret"])


@transaction.atomic
def mastodon_registration_claim(*, instance_url: str, user) -> MastodonAppRegistration:
    """Count one app registration against the person asking for it (the current request's,
    see apps.common.acting), or refuse it: QuotaExceeded MASTODON_REGISTRATIONS_EXHAUSTED
    past MASTODON_APP_REGISTRATIONS_PER_USER_DAY in the last 24 hours or
    MASTODON_APP_REGISTRATIONS_PER_USER_TOTAL in all. Without a person (an operator's
    command) it is logged but not capped. Committed before the network call, so no lock is
    held while the server answers."""
    if user is None or not getattr(user, "pk", None):
        return MastodonAppRegistration.objects.create(user=None, instance_url=instance_url)
    # The person's row lock serializes their concurrent attempts: two tabs cannot both
    # take the last registration of the day.
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    mine = MastodonAppRegistration.objects.filter(user_id=user.pk)
    per_day = settings.MASTODON_APP_REGISTRATIONS_PER_USER_DAY
    total = settings.MASTODON_APP_REGISTRATIONS_PER_USER_TOTAL
    today = mine.filter(created_at__gte=timezone.now() - timedelta(days=1)).count()
    if today >= per_day:
        raise QuotaExceeded(
            f"You have connected {today} new Mastodon servers today, the most allowed in a "
            "day. Try again tomorrow, or connect an account on a server this site already "
            "knows.",
            code="MASTODON_REGISTRATIONS_EXHAUSTED",
            details={"per_day": per_day, "used_today": today},
        )
    used = mine.count()
    if used >= total:
        raise QuotaExceeded(
            f"You have connected {used} different Mastodon servers, the most allowed per "
            "person. Connect accounts on servers this site already knows, or ask the "
            "operator.",
            code="MASTODON_REGISTRATIONS_EXHAUSTED",
            details={"total": total, "used": used},
        )
    return MastodonAppRegistration.objects.create(user_id=user.pk, instance_url=instance_url)


@transaction.atomic
def _store(instance_url: str, redirect_uri: str, client_id: str, secret: str) -> MastodonApp:
    app = MastodonApp.objects.select_for_update().filter(instance_url=instance_url).first()
    app = app or MastodonApp(instance_url=instance_url)
    app.client_id = client_id
    app.redirect_uri = redirect_uri
    app.scopes = SCOPES
    app.set_client_secret(secret)
    app.full_clean(exclude=["client_secret_ciphertext"])
    app.save()
    return app

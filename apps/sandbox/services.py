"""Creating and reconnecting sandbox accounts: the platform-side account and our connected
SocialAccount."""

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts import services as account_services
from apps.accounts.models import SocialAccount, Workspace
from apps.common.errors import Conflict, QuotaExceeded, ValidationFailed
from apps.sandbox.behaviour import COUNTED, behaviour_clean
from apps.sandbox.models import SandboxAccount
from apps.sandbox.server import ACCESS_TOKEN_TTL

PLATFORM = "sandbox"


def _new_token() -> str:
    return SandboxAccount._meta.get_field("access_token").default()


@transaction.atomic
def sandbox_account_create(
    *, workspace: Workspace, handle: str, behaviour: dict | None = None
) -> SocialAccount:
    """Open an account on the sandbox platform and connect it to the workspace.

    The account's behaviour decides how the sandbox answers it (see behaviour.py); the
    parts a client would know about a platform (whether it honours idempotency keys, its
    text limit) are copied onto the SocialAccount's settings. A workspace holds at most
    SANDBOX_ACCOUNTS_PER_WORKSPACE sandbox accounts; handles are unique within it.
    """
    handle = (handle or "").strip().lstrip("@")
    if not handle or len(handle) > 100 or any(c.isspace() or c == "/" for c in handle):
        raise ValidationFailed(
            "A sandbox handle is 1-100 characters with no spaces or slashes.",
            details={"handle": ["Invalid handle."]},
        )
    clean = behaviour_clean(behaviour)
    # The workspace row lock makes the count and the insert one step under concurrent calls.
    Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
    cap = settings.SANDBOX_ACCOUNTS_PER_WORKSPACE
    held = SandboxAccount.objects.filter(workspace=workspace).count()
    if held >= cap:
        raise QuotaExceeded(
            f"This workspace already holds {held} sandbox accounts, the most it may have ({cap}).",
            code="SANDBOX_ACCOUNT_LIMIT",
            details={"limit": cap, "held": held},
        )
    try:
        with transaction.atomic():
            remote = SandboxAccount.objects.create(
                workspace=workspace,
                handle=handle,
                behaviour=clean,
                counters={name: clean[name] for name in COUNTED},
            )
    except IntegrityError:
        raise Conflict(
            f"The sandbox handle '{handle}' is taken in this workspace.",
            code="HANDLE_TAKEN",
            details={"handle": [f"'{handle}' is taken."]},
        ) from None
    return account_services.social_account_connect(
        workspace=workspace,
        platform=PLATFORM,
        remote_id=str(remote.pk),
        handle=handle,
        display_name=f"Sandbox @{handle}",
        credentials={"access_token": remote.access_token, "refresh_token": remote.refresh_token},
        token_expires_at=timezone.now() + ACCESS_TOKEN_TTL,
        settings={
            "honours_idempotency_key": clean["honours_idempotency_key"],
            "text_limit": clean["text_limit"],
        },
    )


@transaction.atomic
def sandbox_account_reconnect(*, account: SocialAccount) -> SocialAccount:
    """Reconnect a sandbox account as a platform's consent screen would: the sandbox
    issues a new token pair and stops refusing it (the account's `expired_token`
    behaviour ends; its other behaviours stay), and the SocialAccount stores the pair."""
    remote = (
        SandboxAccount.objects.select_for_update()
        .filter(workspace_id=account.workspace_id, pk=account.remote_id)
        .first()
    )
    if remote is None:
        raise Conflict(
            "This sandbox account no longer exists on the sandbox platform.",
            code="SANDBOX_ACCOUNT_GONE",
            details={"account": account.pk},
        )
    remote.behaviour = {**remote.behaviour, "expired_token": False}
    remote.access_token = _new_token()
    remote.refresh_token = _new_token()
    remote.save(update_fields=["behaviour", "access_token", "refresh_token", "updated_at"])
    return account_services.social_account_connect(
        workspace=account.workspace,
        platform=account.platform,
        remote_id=account.remote_id,
        handle=account.handle,
        display_name=account.display_name,
        credentials={"access_token": remote.access_token, "refresh_token": remote.refresh_token},
        token_expires_at=timezone.now() + ACCESS_TOKEN_TTL,
        settings=account.settings,
    )

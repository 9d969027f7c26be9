"""Writes to users, tenants, tokens and social accounts. Every client (web, API, admin,
commands) goes through these functions; memberships and seats are ``membership.py``'s."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings as django_settings
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from apps.accounts import crypto
from apps.accounts.membership import workspace_member_set
from apps.accounts.models import (
    ApiToken,
    Organization,
    OrganizationMembership,
    SocialAccount,
    User,
    Workspace,
    WorkspaceMembership,
)
from apps.accounts.permissions import effective_role, role_bound_scopes
from apps.accounts.token_read import token_read
from apps.accounts.verification import email_verification_send, user_mark_email_verified
from apps.common import events
from apps.common.errors import Conflict, DomainError

# last_used_at is written at most this often per token, to keep writes off every request.
TOKEN_TOUCH_INTERVAL = timedelta(seconds=60)


def _unique_slug(model, base: str) -> str:
    slug = slugify(base)[:60] or "space"
    candidate, n = slug, 1
    while model.objects.filter(slug=candidate).exists():
        n += 1
        candidate = f"{slug}-{n}"
    return candidate


def user_get_or_create(
    *, email: str, password: str | None = None, name: str = "", verified: bool = False
) -> User:
    """The user with this address, created when new. ``verified``: the caller (an operator's
    command, the demo) vouches for the address, so it counts as verified."""
    user = User.objects.filter(email__iexact=email).first()
    if user is None:
        user = User.objects.create_user(email=email, password=password, name=name)
    if verified:
        user_mark_email_verified(user=user, method="operator")
    return user


@transaction.atomic
def user_sign_up(
    *, email: str, password: str, name: str = "", display_timezone: str = "UTC"
) -> User:
    """Open an account with an unverified address, and email it a verification link."""
    user = User.objects.create_user(
        email=email, password=password, name=name, display_timezone=display_timezone
    )
    email_verification_send(user=user, force=True)
    return user


@transaction.atomic
def organization_create(*, name: str, owner: User, slug: str | None = None) -> Organization:
    """A new organization owned by ``owner``. The web app lets only verified people create
    one (``verified_user_view``); operators' commands vouch for their owners."""
    org = Organization(name=name, slug=slug or _unique_slug(Organization, name))
    org.full_clean()
    org.save()
    OrganizationMembership.objects.create(
        organization=org, user=owner, role=OrganizationMembership.Role.OWNER
    )
    return org


@transaction.atomic
def workspace_create(
    *,
    organization: Organization,
    name: str,
    slug: str | None = None,
    default_timezone: str = "UTC",
    admin: User | None = None,
) -> Workspace:
    ws = Workspace(
        organization=organization,
        name=name,
        slug=slug or _unique_slug(Workspace, name),
        default_timezone=default_timezone,
    )
    ws.full_clean()
    ws.save()
    if admin is not None:
        workspace_member_set(
            workspace=ws, user=admin, role=WorkspaceMembership.Role.ADMIN, actor=admin
        )
    return ws


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    clear: str  # shown once, never stored


def _lock_token(token: ApiToken) -> ApiToken:
    return ApiToken.objects.select_for_update().get(pk=token.pk)


@transaction.atomic
def api_token_create(
    *,
    workspace: Workspace,
    name: str,
    scopes: list[str],
    created_by: User | None = None,
    parent: ApiToken | None = None,
    client: str = ApiToken.Client.API,
) -> IssuedToken:
    """Create a token and return its clear secret, which is not kept anywhere.

    ``parent`` is the token minting this one (revoking it revokes this). ``client``: who it
    is for (``socialpost login`` makes CLI tokens, ``apps.accounts.cli_login``). A
    workspace holds at most ``API_TOKENS_PER_WORKSPACE`` live tokens (Conflict
    TOKEN_LIMIT_REACHED).
    """
    valid = set(ApiToken.Scope.values)
    unknown = sorted(set(scopes) - valid)
    if unknown or not scopes:
        raise DomainError(
            f"Unknown or missing scopes: {', '.join(unknown) or '(none)'}. "
            f"Choose from {', '.join(ApiToken.Scope.values)}.",
            code="INVALID_SCOPES",
            details={"scopes": unknown},
        )
    # The workspace's row lock serializes concurrent mints, so two cannot both take the
    # last place under the cap.
    Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
    if parent is not None and _lock_token(parent).is_revoked:
        # Revoked while this mint was in flight: a child must not outlive it.
        raise Conflict("The minting token has been revoked.", code="TOKEN_REVOKED")
    limit = django_settings.API_TOKENS_PER_WORKSPACE
    live = ApiToken.objects.for_workspace(workspace).active().count()
    if live >= limit:
        raise Conflict(
            f"This workspace already has {live} live tokens (the limit is {limit}). "
            "Revoke tokens it no longer uses first.",
            code="TOKEN_LIMIT_REACHED",
            details={"limit": limit, "live": live},
        )
    clear, prefix = ApiToken.generate()
    token = ApiToken.objects.create(
        workspace=workspace,
        name=name,
        prefix=prefix,
        token_hash=ApiToken.hash_secret(clear),
        scopes=sorted(set(scopes), key=ApiToken.Scope.values.index),
        created_by=created_by,
        parent=parent,
        client=client,
    )
    events.emit(events.TOKEN_CREATED, token=token)
    return IssuedToken(token=token, clear=clear)


@transaction.atomic
def api_token_revoke(*, token: ApiToken) -> ApiToken:
    """Revoke the token and every token minted from it, down the line, at once."""
    # A concurrent mint from this token waits, then sees it revoked.
    was_revoked = _lock_token(token).is_revoked
    now = timezone.now()
    ids = [token.pk, *ApiToken.objects.descendants_of(token)]
    ApiToken.objects.filter(pk__in=ids, revoked_at__isnull=True).update(
        revoked_at=now, updated_at=now
    )
    token.refresh_from_db(fields=["revoked_at", "updated_at"])
    if not was_revoked:
        events.emit(events.TOKEN_REVOKED, token=token)
    return token


def api_token_authenticate(clear: str) -> ApiToken | None:
    """Return the live token for a clear secret, or None. Revoked tokens, tokens of deleted
    organizations and tokens whose creator is no longer an active member of the workspace
    do not authenticate. One query (see apps.accounts.token_read), whatever the case.

    The token comes back holding only the scopes its creator's role allows now
    (``role_bound_scopes``): a token made by an admin who is a viewer today reads, and
    nothing more, and all it was granted again once they are an admin again: the stored
    grant (kept in ``granted_scopes``) is never rewritten by a role change
    (``apps.accounts.token_roles``), so the bound holds even for a change made around the
    services. Tokens without a creator are the operator's and keep their scopes."""
    from apps.accounts.models import TOKEN_PREFIX_LEN

    found = token_read(clear[:TOKEN_PREFIX_LEN])
    if found is None:
        return None
    token, org_role, membership_role = found
    if not token.matches(clear) or token.is_revoked:
        return None
    if token.workspace.organization.state == Organization.State.DELETED:
        return None
    creator = token.created_by
    if creator is not None:
        role = effective_role(creator, org_role, membership_role)
        if role is None:
            return None
        token.granted_scopes = list(token.scopes)
        token.scopes = role_bound_scopes(token.scopes, role)
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > TOKEN_TOUCH_INTERVAL:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


@transaction.atomic
def social_account_connect(
    *,
    workspace: Workspace,
    platform: str,
    remote_id: str,
    handle: str,
    credentials: dict,
    display_name: str = "",
    token_expires_at: datetime | None = None,
    settings: dict | None = None,
) -> SocialAccount:
    """Create or reconnect an account, storing its credentials encrypted."""
    account, _ = SocialAccount.objects.select_for_update().get_or_create(
        workspace=workspace,
        platform=platform,
        remote_id=remote_id,
        defaults={"handle": handle},
    )
    account.handle = handle
    account.display_name = display_name
    account.token_expires_at = token_expires_at
    account.settings = settings or account.settings or {}
    account.status = SocialAccount.Status.CONNECTED
    account.full_clean(exclude=["credentials_ciphertext"])
    social_account_store_credentials(account=account, credentials=credentials, save=False)
    account.save()
    events.emit(events.ACCOUNT_CONNECTED, account=account)
    return account


def social_account_store_credentials(
    *, account: SocialAccount, credentials: dict, save: bool = True
) -> None:
    sealed = crypto.seal(credentials, aad=account.credentials_aad())
    account.credentials_key_id = sealed.key_id
    account.credentials_ciphertext = sealed.ciphertext
    if save:
        account.save(update_fields=["credentials_key_id", "credentials_ciphertext", "updated_at"])


def social_account_credentials(account: SocialAccount) -> dict:
    """Decrypt the account's credentials; raises crypto.CredentialsError on a wrong key."""
    if not account.credentials_ciphertext:
        return {}
    sealed = crypto.Sealed(account.credentials_key_id, bytes(account.credentials_ciphertext))
    return crypto.unseal(sealed, aad=account.credentials_aad())


def social_account_mark_needs_reconnect(*, account: SocialAccount) -> None:
    SocialAccount.objects.filter(pk=account.pk).update(
        status=SocialAccount.Status.NEEDS_RECONNECT, updated_at=timezone.now()
    )
    account.status = SocialAccount.Status.NEEDS_RECONNECT


@transaction.atomic
def social_account_disconnect(*, account: SocialAccount) -> SocialAccount | None:
    """Disconnect an account and erase its stored credentials.

    An account no rendition references is deleted (returns None). One with delivery
    history is kept, disabled, so past posts keep their record (returns the account);
    destinations still due on it fail with action ``reconnect`` when their time comes,
    and new ones are refused when scheduled. Reconnecting brings the same row back.
    """
    # Locked against a concurrent reconnect; a rendition created meanwhile cannot be
    # orphaned: its foreign key check fails at commit once the row is gone.
    account = SocialAccount.objects.select_for_update().get(pk=account.pk)
    events.emit(events.ACCOUNT_DISCONNECTED, account=account)
    if not account.renditions.exists():
        account.delete()
        return None
    account.status = SocialAccount.Status.DISABLED
    account.credentials_key_id = ""
    account.credentials_ciphertext = None
    account.token_expires_at = None
    account.save(
        update_fields=[
            "status",
            "credentials_key_id",
            "credentials_ciphertext",
            "token_expires_at",
            "updated_at",
        ]
    )
    return account


def encryption_keys_rotate() -> int:
    """Re-encrypt every account whose credentials are not under the newest key.
    Returns how many rows changed. Each row is re-read and rewritten under a row lock."""
    newest = crypto.current_key_id()
    changed = 0
    pending = (
        SocialAccount.objects.exclude(credentials_key_id=newest)
        .exclude(credentials_ciphertext__isnull=True)
        .values_list("pk", flat=True)
    )
    for pk in list(pending):
        with transaction.atomic():
            account = SocialAccount.objects.select_for_update().get(pk=pk)
            if account.credentials_key_id == newest or not account.credentials_ciphertext:
                continue
            social_account_store_credentials(
                account=account, credentials=social_account_credentials(account)
            )
            changed += 1
    return changed

"""``socialpost login`` confirmed in the browser: the command-line client's way to a token
without copying a secret by hand (a device authorization, as OAuth's device flow).

1. The command starts a login (``cli_login_start``): it keeps a secret device code and
   shows a short user code and the link to confirm it.
2. A signed-in person opens the link, picks one of their workspaces and the scopes, no
   more than their role there allows, and confirms the code (``cli_login_confirm``).
3. The command, polling with its device code (``cli_login_collect``), receives a new
   token of that person's, marked as the CLI's (``ApiToken.Client.CLI``), once.

The token is listed on the workspace's tokens page as the command line's and revoked
there like any other; it is bounded by its maker's role like any other.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import ApiToken, CliLogin, User, Workspace
from apps.accounts.permissions import holds_power, scopes_for_role, workspace_role
from apps.accounts.services import IssuedToken, api_token_create
from apps.common.errors import Conflict, DomainError, NotFound, PermissionDenied, ValidationFailed

CLI_LOGIN_TTL = timedelta(minutes=10)
POLL_INTERVAL_S = 2
# No vowels (no words), no look-alikes: 20^8 codes, tried only by a signed-in person.
_CODE_LETTERS = "BCDFGHJKLMNPQRSTVWXZ"


class CliLoginExpired(DomainError):
    code = "CLI_LOGIN_EXPIRED"
    http_status = 410


def _hash(device_code: str) -> str:
    return hashlib.sha256(device_code.encode()).hexdigest()


def normalize_code(text: str) -> str:
    """What a person typed, as stored: upper case, "ABCD-EFGH"."""
    letters = "".join(ch for ch in text.upper() if ch.isalpha())
    return f"{letters[:4]}-{letters[4:]}" if len(letters) == 8 else letters


def cli_login_start(*, client_name: str = "") -> tuple[str, CliLogin]:
    """A new login waiting for its person: (the clear device code, the row with its user
    code). Logins expired a day ago are deleted on the way."""
    now = timezone.now()
    CliLogin.objects.filter(expires_at__lt=now - timedelta(days=1)).delete()
    device_code = secrets.token_urlsafe(32)
    letters = "".join(secrets.choice(_CODE_LETTERS) for _ in range(8))
    login = CliLogin.objects.create(
        device_code_hash=_hash(device_code),
        user_code=f"{letters[:4]}-{letters[4:]}",
        client_name=client_name.strip()[:60],
        expires_at=now + CLI_LOGIN_TTL,
    )
    return device_code, login


def _unknown() -> NotFound:
    return NotFound(
        "No login waits for this code: it was mistyped, used, or has expired. Run "
        "`socialpost login` again.",
        code="CLI_LOGIN_UNKNOWN",
    )


@transaction.atomic
def cli_login_confirm(
    *, user_code: str, user: User, workspace: Workspace, scopes: list[str]
) -> CliLogin:
    """The person confirms the login with this user code for a token of theirs in the
    workspace with these scopes. Errors: NotFound CLI_LOGIN_UNKNOWN (no such code waiting,
    or it expired), PermissionDenied (no role in the workspace, or scopes beyond it:
    SCOPE_ESCALATION), ValidationFailed (no scope that grants anything)."""
    login = (
        CliLogin.objects.select_for_update()
        .filter(user_code=normalize_code(user_code), confirmed_at__isnull=True)
        .first()
    )
    if login is None or login.is_expired:
        raise _unknown()
    role = workspace_role(user, workspace)
    if role is None:
        raise PermissionDenied("You have no role in this workspace.")
    wanted = list(dict.fromkeys(scopes))
    unknown = [scope for scope in wanted if scope not in ApiToken.Scope.values]
    if unknown or not holds_power(wanted):
        raise ValidationFailed(
            "Choose at least one of read, write, publish or admin.",
            details={"scopes": ["Choose at least one of read, write, publish or admin."]},
        )
    beyond = sorted(set(wanted) - scopes_for_role(role))
    if beyond:
        raise PermissionDenied(
            f"As {role} of {workspace.name} you cannot grant {', '.join(beyond)}.",
            code="SCOPE_ESCALATION",
            details={"scopes": beyond},
        )
    login.confirmed_by = user
    login.workspace = workspace
    login.scopes = sorted(wanted, key=ApiToken.Scope.values.index)
    login.confirmed_at = timezone.now()
    login.save()
    return login


@transaction.atomic
def cli_login_collect(*, device_code: str) -> IssuedToken | None:
    """The command's poll: None while nobody has confirmed; once confirmed, the new CLI
    token (its secret in this answer only). Errors: NotFound CLI_LOGIN_UNKNOWN, 410
    CLI_LOGIN_EXPIRED, Conflict CLI_LOGIN_USED (the token was handed out already), and
    those of ``api_token_create`` (TOKEN_LIMIT_REACHED)."""
    login = CliLogin.objects.select_for_update().filter(device_code_hash=_hash(device_code)).first()
    if login is None:
        raise _unknown()
    if login.token_id is not None:
        raise Conflict("This login already received its token.", code="CLI_LOGIN_USED")
    if login.is_expired:
        raise CliLoginExpired("Nobody confirmed this login in time. Run `socialpost login` again.")
    if login.confirmed_at is None:
        return None
    assert login.workspace is not None and login.confirmed_by is not None
    name = f"CLI on {login.client_name}" if login.client_name else "CLI"
    issued = api_token_create(
        workspace=login.workspace,
        name=name,
        scopes=list(login.scopes),
        created_by=login.confirmed_by,
        client=ApiToken.Client.CLI,
    )
    login.token = issued.token
    login.save(update_fields=["token", "updated_at"])
    return issued

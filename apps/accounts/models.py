"""Users, the tenants they work in (organizations and their workspaces), roles, API tokens and
connected social accounts."""

import hashlib
import hmac
import secrets
import uuid
import zoneinfo
from typing import ClassVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from apps.common.querysets import WorkspaceQuerySet


def validate_timezone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(f"'{value}' is not an IANA time zone (e.g. Europe/Warsaw).")


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def create_user(self, email: str, password: str | None = None, **extra) -> "User":
        if not email:
            raise ValueError("An email address is required.")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **extra) -> "User":
        # The operator vouches for the address of an account made on the command line.
        extra.update(is_staff=True, is_superuser=True)
        extra.setdefault("email_verified_at", timezone.now())
        return self.create_user(email, password, **extra)


class User(AbstractBaseUser, PermissionsMixin):
    """A person who signs in with an email address. May belong to many organizations.

    Until the address is verified (``email_verified_at``) the person can sign in but joins
    and creates nothing: whoever typed the address at sign-up may not own it.
    """

    email = models.EmailField(unique=True)
    name = models.CharField(max_length=150, blank=True)
    display_timezone = models.CharField(
        max_length=64,
        default="UTC",
        validators=[validate_timezone],
        help_text="Zone used to show times; it never decides when a post fires.",
    )
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False)
    email_verified_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the person proved they receive mail at this address (a verification "
        "link, a password reset, an invitation link); empty until then.",
    )
    email_verification_sent_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    def __str__(self) -> str:
        return self.email

    @property
    def is_email_verified(self) -> bool:
        return self.email_verified_at is not None


def default_storage_quota_bytes() -> int:
    """ORGANIZATION_STORAGE_QUOTA_BYTES, the storage quota new organizations start with."""
    return settings.ORGANIZATION_STORAGE_QUOTA_BYTES


class Organization(models.Model):
    """The paying tenant (an agency or a company). Quotas and the in-flight cap apply here.

    States: active -> suspended -> active; any -> deleted. A suspended or deleted
    organization's jobs are not claimed: they wait, and run if it comes back.
    """

    class State(models.TextChoices):
        ACTIVE = "active"
        SUSPENDED = "suspended"
        DELETED = "deleted"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.ACTIVE)
    monthly_post_quota = models.PositiveIntegerField(
        default=1000, help_text="Publications that may be created per calendar month (UTC)."
    )
    inflight_cap = models.PositiveIntegerField(
        default=10,
        help_text="Publish jobs of this organization that may run at the same time (status "
        "polls and lookups hold no seat; webhooks have their own budget).",
    )
    webhook_inflight_cap = models.PositiveIntegerField(
        default=4,
        help_text="Webhook deliveries of this organization that may run at the same time "
        "(a budget of their own: slow receivers never hold back publishing).",
    )
    seats = models.PositiveIntegerField(default=10, help_text="Members allowed.")
    storage_quota_bytes = models.PositiveBigIntegerField(
        default=default_storage_quota_bytes,
        help_text="Media bytes its workspaces may store together (0: no limit).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(inflight_cap__gte=1), name="organization_inflight_cap_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(webhook_inflight_cap__gte=1),
                name="organization_webhook_inflight_cap_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_active(self) -> bool:
        return self.state == self.State.ACTIVE


class Workspace(models.Model):
    """A team's or a client's space inside an organization; the unit of tenant isolation."""

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="workspaces"
    )
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    default_timezone = models.CharField(
        max_length=64, default="UTC", validators=[validate_timezone]
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.organization.slug}/{self.slug}"


class OrganizationMembership(models.Model):
    """A user's role in an organization. Owners and admins administer all its workspaces."""

    class Role(models.TextChoices):
        OWNER = "owner"
        ADMIN = "admin"
        MEMBER = "member"

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="memberships"
    )
    user = models.ForeignKey(
        User, on_delete=models.CASCADE, related_name="organization_memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "user"], name="organization_membership_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} of {self.organization}"


class WorkspaceMembership(models.Model):
    """A user's role in one workspace: admin (manage members, tokens, accounts), editor
    (compose, schedule, publish), viewer (read only)."""

    class Role(models.TextChoices):
        ADMIN = "admin"
        EDITOR = "editor"
        VIEWER = "viewer"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="workspace_memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.EDITOR)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "user"], name="workspace_membership_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} in {self.workspace}"


class InvitationQuerySet(models.QuerySet):
    def open(self) -> "InvitationQuerySet":
        """Neither accepted nor revoked: pending, or expired and waiting to be resent."""
        return self.filter(accepted_at__isnull=True, revoked_at__isnull=True)

    def pending(self, now=None) -> "InvitationQuerySet":
        """Open and not expired: the link works."""
        return self.open().filter(expires_at__gt=now or timezone.now())


class Invitation(models.Model):
    """An offer, emailed to an address, to join an organization (``workspace`` empty, an
    organization role) or one of its workspaces (a workspace role, no organization role).

    Nothing is granted until the person accepts through the emailed single-use link, signed
    in as a verified user with that address. Only a SHA-256 hash of the link's token is
    stored. States: pending -> accepted | revoked; pending -> expired (time passes) ->
    pending (resent, with a new token and expiry; the old link stops working).
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        ACCEPTED = "accepted"
        REVOKED = "revoked"
        EXPIRED = "expired"

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="invitations"
    )
    workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="invitations"
    )
    email = models.EmailField()
    role = models.CharField(
        max_length=16,
        help_text="An organization role (owner, admin, member) for an organization invitation; "
        "a workspace role (admin, editor, viewer) for a workspace one.",
    )
    invited_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    token_hash = models.CharField(max_length=64, unique=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = InvitationQuerySet.as_manager()

    class Meta:
        constraints = [
            # Inviting an address again renews its open invitation instead of adding one.
            models.UniqueConstraint(
                fields=["organization", "workspace", "email"],
                condition=models.Q(accepted_at__isnull=True, revoked_at__isnull=True),
                nulls_distinct=False,
                name="invitation_one_open_per_place",
            ),
            models.CheckConstraint(
                condition=models.Q(accepted_at__isnull=True) | models.Q(revoked_at__isnull=True),
                name="invitation_accepted_or_revoked",
            ),
        ]
        indexes = [
            # The invitations waiting for a person: "invitations for my verified address".
            models.Index(
                fields=["email"],
                condition=models.Q(accepted_at__isnull=True, revoked_at__isnull=True),
                name="invitation_open_by_email",
            )
        ]

    def __str__(self) -> str:
        return f"{self.email} to {self.workspace or self.organization} as {self.role}"

    def clean(self) -> None:
        roles = (
            OrganizationMembership.Role.values
            if self.workspace_id is None
            else WorkspaceMembership.Role.values
        )
        if self.role not in roles:
            raise ValidationError({"role": f"Choose one of {', '.join(roles)}."})

    @staticmethod
    def hash_token(clear: str) -> str:
        return hashlib.sha256(clear.encode()).hexdigest()

    @property
    def status(self) -> str:
        if self.accepted_at is not None:
            return self.Status.ACCEPTED
        if self.revoked_at is not None:
            return self.Status.REVOKED
        if self.expires_at <= timezone.now():
            return self.Status.EXPIRED
        return self.Status.PENDING

    @property
    def is_open(self) -> bool:
        return self.accepted_at is None and self.revoked_at is None

    @property
    def place(self) -> str:
        """What the invitation opens: the workspace's or the organization's name."""
        return self.workspace.name if self.workspace is not None else self.organization.name


class ApiTokenQuerySet(WorkspaceQuerySet):
    def active(self) -> "ApiTokenQuerySet":
        return self.filter(revoked_at__isnull=True)

    def descendants_of(self, token: "ApiToken") -> list[int]:
        """Ids of every token minted by this one, directly or down the line."""
        found: list[int] = []
        level = [token.pk]
        while level:
            level = list(self.filter(parent_id__in=level).values_list("pk", flat=True))
            found += level
        return found


TOKEN_PREFIX_LEN = 12


class ApiToken(models.Model):
    """A workspace-scoped API token. The clear secret is shown once; only its SHA-256 hash
    and a short visible prefix are stored, and lookups go by prefix then a constant-time
    comparison of hashes.

    A token minted by another token records it as ``parent`` and is revoked with it. A token
    works only while its creator (when it has one) is an active member of its workspace;
    tokens without a creator are the operator's (``create_api_token``, the demo).
    """

    class Scope(models.TextChoices):
        READ = "read"
        WRITE = "write"
        PUBLISH = "publish"
        ADMIN = "admin"
        MCP = "mcp"

    class Client(models.TextChoices):
        """Who the token was issued to: made on the tokens page (or by the API or the
        operator), or handed to ``socialpost login`` once a person confirmed it."""

        API = "api", "API"
        CLI = "cli", "Command line"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=TOKEN_PREFIX_LEN, unique=True)
    token_hash = models.CharField(max_length=64)
    scopes = models.JSONField(default=list)
    client = models.CharField(max_length=8, choices=Client.choices, default=Client.API)
    # Deleting the creator deletes their tokens: a creator-less token is the operator's, and
    # a deleted person's token must not become one.
    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="children",
        help_text="The token that minted this one; revoking it revokes this.",
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ApiTokenQuerySet.as_manager()

    # Worked out, never stored. ``scopes`` is what the token was granted, except on a token
    # that authenticated: there it is what the token may do now (the grant bounded by its
    # creator's current role) and ``granted_scopes`` keeps the grant. ``effective_scopes``
    # is set for listing by ``apps.accounts.token_roles.effective_scopes``.
    granted_scopes: list[str] | None = None
    effective_scopes: list[str] | None = None

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @staticmethod
    def hash_secret(clear: str) -> str:
        return hashlib.sha256(clear.encode()).hexdigest()

    @staticmethod
    def generate() -> tuple[str, str]:
        """Return (clear token, prefix). The prefix is the token's first characters."""
        prefix = "sp_" + secrets.token_hex((TOKEN_PREFIX_LEN - 3 + 1) // 2)[: TOKEN_PREFIX_LEN - 3]
        return prefix + secrets.token_urlsafe(32), prefix

    def matches(self, clear: str) -> bool:
        return hmac.compare_digest(self.token_hash, self.hash_secret(clear))

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes


class SocialAccount(models.Model):
    """A connected destination (a Mastodon account, a Facebook Page, a sandbox account...).

    Credentials are encrypted at rest with AES-256-GCM (see apps.accounts.crypto); the id of
    the key that encrypted them is stored beside the ciphertext so keys can rotate.
    Status: connected -> needs_reconnect (token expired or revoked) -> connected; any ->
    disabled.
    """

    class Status(models.TextChoices):
        CONNECTED = "connected"
        NEEDS_RECONNECT = "needs_reconnect"
        DISABLED = "disabled"

    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="social_accounts"
    )
    platform = models.CharField(max_length=32)
    remote_id = models.CharField(max_length=255)
    handle = models.CharField(max_length=255)
    display_name = models.CharField(max_length=255, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.CONNECTED)
    token_expires_at = models.DateTimeField(null=True, blank=True)
    settings = models.JSONField(
        default=dict, blank=True, help_text="Non-secret per-account settings (instance URL…)."
    )
    credentials_key_id = models.CharField(max_length=32, blank=True)
    credentials_ciphertext = models.BinaryField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "platform", "remote_id"], name="social_account_unique_remote"
            )
        ]

    def __str__(self) -> str:
        return f"{self.platform}:{self.handle}"

    def credentials_aad(self) -> bytes:
        """Associated data binding a ciphertext to this row and tenant: copied elsewhere,
        it fails to decrypt."""
        if self.pk is None:
            raise ValueError("Save the account before storing credentials.")
        return f"social_account:{self.workspace_id}:{self.pk}".encode()

    @property
    def token_expired(self) -> bool:
        return self.token_expires_at is not None and self.token_expires_at <= timezone.now()


class Installation(models.Model):
    """This installation's identity: one row, made when the database is first migrated.

    Handles we derive for platforms (a Bluesky record key) mix it in, so a reset database
    whose ids start over never mistakes an earlier installation's post for its own."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return str(self.id)


class CliLogin(models.Model):
    """A ``socialpost login`` waiting for its person (a device authorization).

    The command gets a secret device code and a short user code, shows the user code with
    a link, and polls with the device code. A signed-in person who opens the link picks the
    workspace and scopes (no more than their role allows) and confirms the code; the next
    poll creates the token (``client`` CLI, made by that person) and hands its secret over,
    once. Only the device code's SHA-256 is stored; a login not confirmed and collected
    within ``CLI_LOGIN_TTL`` expires.
    """

    device_code_hash = models.CharField(max_length=64, unique=True)
    user_code = models.CharField(max_length=9, unique=True)
    client_name = models.CharField(max_length=60, blank=True)
    expires_at = models.DateTimeField()
    confirmed_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    scopes = models.JSONField(default=list, blank=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    token = models.OneToOneField(
        ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["expires_at"], name="cli_login_expiry")]

    def __str__(self) -> str:
        return f"CLI login {self.user_code}"

    @property
    def is_expired(self) -> bool:
        return self.expires_at <= timezone.now()

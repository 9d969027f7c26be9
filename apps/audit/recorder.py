"""The subscribers that turn domain events and sign-ins into audit events.

Domain events are recorded inside the emitter's transaction, so an action that is rolled
back leaves no trace and one that commits always does. Each handler reads only the
payload; `actions.py` lists what each action means.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.http import HttpRequest

from apps.accounts.models import ApiToken, Organization, SocialAccount, User, Workspace
from apps.audit import actions
from apps.audit.context import Actor, current_actor
from apps.audit.models import AuditEvent
from apps.audit.services import audit_record
from apps.common import events
from apps.common.acting import client_of, peer_of

Target = AuditEvent.Target


def _scope(workspace: Workspace | None) -> dict[str, Any]:
    return {"workspace": workspace} if workspace is not None else {}


def _invitation(action: str, invitation, **metadata: Any) -> None:
    workspace = invitation.workspace
    audit_record(
        action=action,
        organization=invitation.organization,
        **_scope(workspace),
        target_type=Target.INVITATION,
        target_id=invitation.pk,
        target_label=invitation.email,
        metadata={
            "role": invitation.role,
            "workspace": workspace.name if workspace else None,
            **metadata,
        },
    )


def member_invited(*, invitation, actor: User | None, resent: bool) -> None:
    _invitation(actions.MEMBER_INVITED, invitation, resent=resent)


def member_invite_accepted(*, invitation, user: User) -> None:
    _invitation(actions.MEMBER_INVITE_ACCEPTED, invitation, user=user.email)


def member_invite_revoked(*, invitation, actor: User | None) -> None:
    _invitation(actions.MEMBER_INVITE_REVOKED, invitation)


def member_added(
    *,
    organization: Organization,
    workspace: Workspace | None,
    user: User,
    role: str,
    actor: User | None,
) -> None:
    audit_record(
        action=actions.MEMBER_ADDED,
        organization=organization,
        **_scope(workspace),
        target_type=Target.USER,
        target_id=user.pk,
        target_label=user.email,
        metadata={"role": role},
    )


def _token_effects(tokens: list[dict]) -> dict[str, Any]:
    """What a role change did to the person's tokens, readable and by id."""
    if not tokens:
        return {}
    return {
        "tokens": [change["summary"] for change in tokens],
        "tokens_revoked": [change["token"] for change in tokens if change["revoked"]],
        "tokens_narrowed": [change["token"] for change in tokens if change["kind"] == "narrowed"],
        "tokens_restored": [change["token"] for change in tokens if change["kind"] == "restored"],
    }


def member_role_changed(
    *,
    organization: Organization,
    workspace: Workspace | None,
    user: User,
    previous: str,
    role: str,
    actor: User | None,
    tokens: list[dict],
) -> None:
    audit_record(
        action=actions.MEMBER_ROLE_CHANGED,
        organization=organization,
        **_scope(workspace),
        target_type=Target.USER,
        target_id=user.pk,
        target_label=user.email,
        metadata={"previous": previous, "role": role, **_token_effects(tokens)},
    )


def member_removed(
    *,
    organization: Organization,
    workspace: Workspace | None,
    user: User,
    actor: User | None,
    tokens: list[dict],
) -> None:
    audit_record(
        action=actions.MEMBER_REMOVED,
        organization=organization,
        **_scope(workspace),
        target_type=Target.USER,
        target_id=user.pk,
        target_label=user.email,
        metadata=_token_effects(tokens),
    )


def email_verified(*, user: User, method: str) -> None:
    audit_record(
        action=actions.EMAIL_VERIFIED,
        target_type=Target.USER,
        target_id=user.pk,
        target_label=user.email,
        metadata={"method": method},
    )


def _token(action: str, token: ApiToken) -> None:
    audit_record(
        action=action,
        workspace=token.workspace,
        target_type=Target.TOKEN,
        target_id=token.pk,
        target_label=str(token),
        metadata={"scopes": list(token.scopes), "parent": token.parent_id},
    )


def token_created(*, token: ApiToken) -> None:
    _token(actions.TOKEN_CREATED, token)


def token_revoked(*, token: ApiToken) -> None:
    _token(actions.TOKEN_REVOKED, token)


def _account(action: str, account: SocialAccount) -> None:
    audit_record(
        action=action,
        workspace=account.workspace,
        target_type=Target.ACCOUNT,
        target_id=account.pk,
        target_label=str(account),
        metadata={"platform": account.platform},
    )


def account_connected(*, account: SocialAccount) -> None:
    _account(actions.ACCOUNT_CONNECTED, account)


def account_disconnected(*, account: SocialAccount) -> None:
    _account(actions.ACCOUNT_DISCONNECTED, account)


def _webhook(action: str, endpoint: Any, metadata: dict | None = None) -> None:
    audit_record(
        action=action,
        workspace=endpoint.workspace,
        target_type=Target.WEBHOOK,
        target_id=endpoint.pk,
        target_label=endpoint.url,
        metadata=metadata,
    )


def webhook_created(*, endpoint: Any) -> None:
    _webhook(actions.WEBHOOK_CREATED, endpoint, {"event_types": list(endpoint.event_types)})


def webhook_updated(*, endpoint: Any, changes: list[str]) -> None:
    _webhook(
        actions.WEBHOOK_UPDATED, endpoint, {"changes": changes, "is_active": endpoint.is_active}
    )


def webhook_secret_rotated(*, endpoint: Any) -> None:
    _webhook(actions.WEBHOOK_SECRET_ROTATED, endpoint)


def webhook_deleted(*, endpoint: Any) -> None:
    _webhook(actions.WEBHOOK_DELETED, endpoint)


def rendition_resolved(*, rendition: Any, outcome: str) -> None:
    audit_record(
        action=actions.RENDITION_RESOLVED,
        workspace=rendition.workspace,
        target_type=Target.RENDITION,
        target_id=rendition.pk,
        target_label=f"{rendition.social_account} (publication {rendition.publication_id})",
        metadata={"outcome": outcome, "publication": rendition.publication_id},
    )


def approval_rule_changed(*, workspace: Workspace, required: bool, actor: User | None) -> None:
    audit_record(
        action=actions.APPROVAL_RULE_CHANGED,
        workspace=workspace,
        target_type=Target.WORKSPACE,
        target_id=workspace.pk,
        target_label=workspace.name,
        metadata={"required": required},
    )


def media_alt_text_changed(
    *, asset: Any, previous: str, publications: list[int], actor: User | None
) -> None:
    """One event per post past draft whose media the change touched (an attachment with no
    alt text of its own shows the file's), on that post's record like its reviews."""
    for publication_id in publications:
        audit_record(
            action=actions.MEDIA_ALT_TEXT_CHANGED,
            workspace=asset.workspace,
            target_type=Target.PUBLICATION,
            target_id=publication_id,
            target_label=f"Publication {publication_id}",
            metadata={
                "media": asset.pk,
                "file": asset.original_name,
                "previous": previous[:500],
                "alt_text": asset.alt_text[:500],
            },
        )


_REVIEW_ACTIONS = {
    "in_review": actions.REVIEW_SUBMITTED,
    "approved": actions.REVIEW_APPROVED,
    "changes_requested": actions.REVIEW_CHANGES_REQUESTED,
    "on_hold": actions.REVIEW_ON_HOLD,
}


def _client(link: Any) -> Actor:
    """A client acting through a link: nobody signed in, named by the link."""
    now = current_actor()
    return replace(now, user=None, token=None, name=f"Client link: {link.label}"[:255])


def _link_metadata(link: Any) -> dict[str, Any]:
    return {"link": link.pk, "client": link.label}


def review_changed(*, publication: Any, review: str, actor: User | None, note: str) -> None:
    """A step of a post's review. An approval records the revision and content hash it
    approved (``apps.approvals.models.Review``); a decision a client made through a link
    is the client's, with the link named."""
    metadata: dict[str, Any] = {"note": note[:500]} if note else {}
    record = getattr(publication, "review", None)  # the reverse one-to-one: one read
    if review == "approved":
        metadata["revision"] = getattr(record, "approved_revision", None)
        metadata["content_hash"] = getattr(record, "approved_hash", "")
    link = getattr(record, "decided_via", None) if review != "in_review" else None
    if link is not None:
        metadata.update(_link_metadata(link))
    audit_record(
        action=_REVIEW_ACTIONS[review],
        workspace=publication.workspace,
        target_type=Target.PUBLICATION,
        target_id=publication.pk,
        target_label=f"Publication {publication.pk}",
        metadata=metadata,
        actor=_client(link) if link is not None else None,
    )


def _portal_link(action: str, link: Any, actor: Actor | None = None) -> None:
    audit_record(
        action=action,
        workspace=link.workspace,
        target_type=Target.WORKSPACE,
        target_id=link.workspace_id,
        target_label=link.workspace.name,
        metadata={**_link_metadata(link), "expires_at": link.expires_at.isoformat()},
        actor=actor,
    )


def portal_link_created(*, link: Any, actor: User | None) -> None:
    _portal_link(actions.PORTAL_LINK_CREATED, link)


def portal_link_revoked(*, link: Any, actor: User | None) -> None:
    _portal_link(actions.PORTAL_LINK_REVOKED, link)


def portal_viewed(*, link: Any) -> None:
    _portal_link(actions.PORTAL_VIEWED, link, _client(link))


def _personal(action: str, user: User) -> None:
    audit_record(action=action, target_type=Target.USER, target_id=user.pk, target_label=user.email)


def two_factor_enabled(*, user: User) -> None:
    _personal(actions.TWO_FACTOR_ENABLED, user)


def two_factor_disabled(*, user: User) -> None:
    _personal(actions.TWO_FACTOR_DISABLED, user)


# -- sign-ins (Django's auth signals: the web app, the admin, any login view) -----------


def _request_actor(request: HttpRequest | None, user: User | None) -> Actor:
    ip, agent = client_of(request)
    peer = peer_of(request)
    if request is None:
        fallback = current_actor()
        ip, agent, peer = fallback.ip, fallback.user_agent, fallback.peer_ip
    return Actor(user=user, ip=ip, user_agent=agent, peer_ip=peer)


def logged_in(sender: Any, request: HttpRequest | None, user: User, **kwargs: Any) -> None:
    audit_record(
        action=actions.LOGIN,
        target_type=Target.USER,
        target_id=user.pk,
        target_label=user.email,
        actor=_request_actor(request, user),
    )


def logged_out(sender: Any, request: HttpRequest | None, user: User | None, **kwargs: Any) -> None:
    if user is None:
        return  # nobody was signed in
    audit_record(
        action=actions.LOGOUT,
        target_type=Target.USER,
        target_id=user.pk,
        target_label=user.email,
        actor=_request_actor(request, user),
    )


def login_failed(
    sender: Any, credentials: dict, request: HttpRequest | None = None, **kwargs: Any
) -> None:
    """The person whose account was tried is the target (never the actor: whoever typed
    the password is unknown). An address with no account is kept for the operator only."""
    identifier = str(credentials.get(User.USERNAME_FIELD) or credentials.get("username") or "")
    user = User.objects.filter(email__iexact=identifier).first() if identifier else None
    audit_record(
        action=actions.LOGIN_FAILED,
        target_type=Target.USER if user else "",
        target_id=user.pk if user else "",
        target_label=user.email if user else identifier[:255],
        actor=_request_actor(request, None),
    )


def connect() -> None:
    """Subscribe every recorder (called once, from AppConfig.ready)."""
    subscriptions: dict[str, Callable[..., None]] = {
        events.MEMBER_INVITED: member_invited,
        events.MEMBER_INVITE_ACCEPTED: member_invite_accepted,
        events.MEMBER_INVITE_REVOKED: member_invite_revoked,
        events.MEMBER_ADDED: member_added,
        events.USER_EMAIL_VERIFIED: email_verified,
        events.MEMBER_ROLE_CHANGED: member_role_changed,
        events.MEMBER_REMOVED: member_removed,
        events.TOKEN_CREATED: token_created,
        events.TOKEN_REVOKED: token_revoked,
        events.ACCOUNT_CONNECTED: account_connected,
        events.ACCOUNT_DISCONNECTED: account_disconnected,
        events.WEBHOOK_CREATED: webhook_created,
        events.WEBHOOK_UPDATED: webhook_updated,
        events.WEBHOOK_SECRET_ROTATED: webhook_secret_rotated,
        events.WEBHOOK_DELETED: webhook_deleted,
        events.RENDITION_RESOLVED: rendition_resolved,
        events.APPROVAL_RULE_CHANGED: approval_rule_changed,
        events.MEDIA_ALT_TEXT_CHANGED: media_alt_text_changed,
        events.PUBLICATION_REVIEW_CHANGED: review_changed,
        events.PORTAL_LINK_CREATED: portal_link_created,
        events.PORTAL_LINK_REVOKED: portal_link_revoked,
        events.PORTAL_VIEWED: portal_viewed,
        events.TWO_FACTOR_ENABLED: two_factor_enabled,
        events.TWO_FACTOR_DISABLED: two_factor_disabled,
    }
    for name, handler in subscriptions.items():
        events.subscribe(name, handler, in_transaction=True)
    user_logged_in.connect(logged_in, dispatch_uid="audit.logged_in")
    user_logged_out.connect(logged_out, dispatch_uid="audit.logged_out")
    user_login_failed.connect(login_failed, dispatch_uid="audit.login_failed")

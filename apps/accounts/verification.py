"""Email verification: proving a person receives mail at their account's address.

A new account is unverified: it can sign in, but joins and creates nothing, because whoever
signed up may have typed someone else's address (and would then collect that person's
invitations). The proof is one of: the emailed verification link opened while signed in to
that account, a completed password reset (which also replaces whatever password the
sign-up chose), signing up through an invitation link sent to the address, or an operator.

The link carries a signed, expiring token naming the user and the address; it does nothing
once the address is verified (single use) or when the account's address changed.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import User
from apps.common import events
from apps.common.errors import Conflict, DomainError

VERIFICATION_MAX_AGE = timedelta(days=3)
# A new link at most this often per account: resending must not turn into a mail cannon.
RESEND_INTERVAL = timedelta(seconds=60)
_SALT = "accounts.email-verification"


class VerificationLinkInvalid(DomainError):
    code = "VERIFICATION_LINK_INVALID"


def verification_token(user: User) -> str:
    return signing.dumps({"u": user.pk, "e": user.email}, salt=_SALT, compress=True)


def verification_link(user: User) -> str:
    return settings.SITE_URL.rstrip("/") + reverse(
        "email-verify", kwargs={"token": verification_token(user)}
    )


def user_for_token(token: str) -> User:
    """The unverified user a verification token names.

    Errors: VerificationLinkInvalid (VERIFICATION_LINK_INVALID) for a forged, expired or
    already used link, or one for an address the account no longer has.
    """
    try:
        data = signing.loads(token, salt=_SALT, max_age=VERIFICATION_MAX_AGE)
    except signing.SignatureExpired:
        raise VerificationLinkInvalid(
            "This confirmation link has expired. Send yourself a new one."
        ) from None
    except signing.BadSignature:
        raise VerificationLinkInvalid(
            "This confirmation link is not valid. Copy the whole link from the email, or "
            "send yourself a new one."
        ) from None
    user = User.objects.filter(pk=data.get("u"), is_active=True).first()
    if user is None or user.email != data.get("e"):
        raise VerificationLinkInvalid("This confirmation link is not valid any more.")
    return user


@transaction.atomic
def email_verification_send(*, user: User, force: bool = False) -> None:
    """Email the user a verification link (after the commit).

    Errors: Conflict VERIFICATION_RECENTLY_SENT when one went out less than a minute ago
    (``force`` skips that check: sign-up sends the first one).
    """
    user = User.objects.select_for_update().get(pk=user.pk)
    if user.is_email_verified:
        return
    now = timezone.now()
    sent = user.email_verification_sent_at
    if not force and sent is not None and now - sent < RESEND_INTERVAL:
        wait = int((RESEND_INTERVAL - (now - sent)).total_seconds()) + 1
        raise Conflict(
            f"A confirmation email went out a moment ago. Check your inbox (and spam folder), "
            f"or ask for another in {wait} seconds.",
            code="VERIFICATION_RECENTLY_SENT",
            details={"retry_after_s": wait},
        )
    User.objects.filter(pk=user.pk).update(email_verification_sent_at=now)
    link = verification_link(user)
    context = {"user": user, "link": link, "valid_days": VERIFICATION_MAX_AGE.days}
    transaction.on_commit(
        lambda: send_mail(
            subject="Confirm your email address for Socialpost",
            message=render_to_string("web/emails/verify_email.txt", context),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=[user.email],
        )
    )


@transaction.atomic
def user_mark_email_verified(*, user: User, method: str) -> bool:
    """Record that the user receives mail at their address. Returns False when it was
    known already (nothing changes, no event)."""
    now = timezone.now()
    changed = User.objects.filter(pk=user.pk, email_verified_at__isnull=True).update(
        email_verified_at=now, updated_at=now
    )
    user.refresh_from_db(fields=["email_verified_at", "updated_at"])
    if changed:
        events.emit(events.USER_EMAIL_VERIFIED, user=user, method=method)
    return bool(changed)


def email_verify(*, token: str, user: User) -> bool:
    """Verify the signed-in ``user``'s address with the token from their email. Returns
    False when it was verified already.

    Errors: VerificationLinkInvalid; Conflict VERIFICATION_OTHER_ACCOUNT when the link is
    another account's (it works only for the account it names, signed in).
    """
    named = user_for_token(token)
    if named.pk != user.pk:
        raise Conflict(
            "This confirmation link is for another account. Log out, then open it again "
            "and log in with the address it was sent to.",
            code="VERIFICATION_OTHER_ACCOUNT",
        )
    return user_mark_email_verified(user=user, method="link")

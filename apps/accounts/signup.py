"""Signing up without telling anyone which addresses have an account.

Whatever address is typed, the person is told the same thing ("check your email") after the
same work (one password hash). A new address gets an unverified account and its
confirmation link; an address that has an account gets a note saying someone tried to sign
up with it, with a link to log in and one to reset the password. Only the owner of the
mailbox learns which case it was.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.core.cache import cache
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse

from apps.accounts.models import User
from apps.accounts.services import user_sign_up

# At most one "you already have an account" note per account in this window.
EXISTING_NOTICE_INTERVAL_S = 15 * 60


def signup_request(
    *, email: str, password: str, name: str = "", display_timezone: str = "UTC"
) -> None:
    """Open an account for a new address, or tell the owner of a known one."""
    email = email.strip().lower()
    existing = User.objects.filter(email__iexact=email).first()
    if existing is None:
        try:
            with transaction.atomic():
                user_sign_up(
                    email=email, password=password, name=name, display_timezone=display_timezone
                )
            return
        except IntegrityError:  # signed up at the same moment by another request
            existing = User.objects.filter(email__iexact=email).first()
            if existing is None:
                raise
    make_password(password)  # the same cost as creating the account: timing tells nothing
    _notify_existing(existing)


def _notify_existing(user: User) -> None:
    if not user.is_active:
        return
    if not cache.add(f"signup-notice:{user.pk}", 1, timeout=EXISTING_NOTICE_INTERVAL_S):
        return  # told a moment ago; a signup form must not become a mail cannon
    site = settings.SITE_URL.rstrip("/")
    context = {
        "user": user,
        "login_link": site + reverse("login"),
        "reset_link": site + reverse("password_reset"),
    }
    transaction.on_commit(
        lambda: send_mail(
            subject="Someone tried to sign up for Socialpost with your address",
            message=render_to_string("web/emails/signup_existing.txt", context),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=[user.email],
        )
    )

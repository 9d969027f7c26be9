"""Signing up (directly or through an invitation), resetting a password, and the user's own
settings."""

from __future__ import annotations

from collections.abc import Iterator

from django import forms
from django.contrib.auth import forms as auth_forms
from django.contrib.auth import password_validation

from apps.accounts.models import User
from apps.accounts.verification import user_mark_email_verified
from apps.web.forms.common import ZoneField


class SignupForm(forms.Form):
    email = forms.EmailField(
        label="Email", widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True})
    )
    name = forms.CharField(
        label="Your name",
        max_length=150,
        required=False,
        widget=forms.TextInput(attrs={"autocomplete": "name"}),
    )
    password = forms.CharField(
        label="Password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="At least 8 characters, not a common password.",
    )
    display_timezone = ZoneField(
        label="Your time zone",
        initial="UTC",
        help_text="Times are shown in this zone. You can change it later.",
        widget=forms.Select(attrs={"data-guess-zone": "1"}),
    )

    def clean_email(self) -> str:
        # Whether the address has an account is never said here (the answer would tell
        # anyone which addresses are customers): the signup view mails its owner instead.
        return self.cleaned_data["email"].lower()

    def clean(self) -> dict:
        super().clean()
        cleaned = self.cleaned_data
        password = cleaned.get("password")
        if password:
            candidate = User(email=cleaned.get("email", ""), name=cleaned.get("name", ""))
            try:
                password_validation.validate_password(password, candidate)
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return cleaned


class InvitedSignupForm(SignupForm):
    """Sign-up from an invitation link: the address is the invitation's, not typed."""

    def __init__(self, *args, email: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        del self.fields["email"]
        self.invited_email = email
        self.fields["name"].widget.attrs["autofocus"] = True

    def clean(self) -> dict:
        self.cleaned_data["email"] = self.invited_email  # the password may not resemble it either
        return super().clean()


class PasswordResetForm(auth_forms.PasswordResetForm):
    """Also reaches active people who never set a password (invited before invitations
    waited to be accepted, or made by an operator): a reset is how they choose one."""

    def get_users(self, email: str) -> Iterator[User]:
        return iter(User.objects.filter(email__iexact=email, is_active=True))


class SetPasswordForm(auth_forms.SetPasswordForm):
    """Choosing a password from a reset link. The link reached the mailbox, so the address
    counts as verified; the new password replaces whatever a sign-up with this address had
    chosen, and every other session of the account ends."""

    def save(self, commit: bool = True) -> User:
        user = super().save(commit=commit)
        if commit:
            user_mark_email_verified(user=user, method="password_reset")
        return user


class ProfileForm(forms.ModelForm):
    display_timezone = ZoneField(
        label="Display time zone",
        help_text="Calendars, lists and the composer show times in this zone. It never "
        "changes when a post goes out.",
    )

    class Meta:
        model = User
        fields = ["name", "display_timezone"]
        labels = {"name": "Your name"}

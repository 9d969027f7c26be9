"""Forms of the two-factor pages."""

from __future__ import annotations

from django import forms
from django.contrib.auth import authenticate

from apps.accounts.models import User
from apps.security import two_factor


class CodeForm(forms.Form):
    code = forms.CharField(
        label="Code",
        max_length=20,
        help_text="The 6-digit code from your authenticator app, or one of your recovery codes.",
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "autofocus": True}
        ),
    )


class EnrollConfirmForm(forms.Form):
    code = forms.CharField(
        label="Code from the app",
        max_length=20,
        help_text="The 6-digit code the app shows now, to check it is set up right.",
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "autofocus": True}
        ),
    )


class PasswordAndCodeForm(forms.Form):
    """Changes to two-factor need the password and a current code (or a recovery code)."""

    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )
    code = forms.CharField(
        label="Code",
        max_length=20,
        help_text="From your authenticator app, or a recovery code (it is used up).",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code"}),
    )

    def __init__(self, *args, user: User, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean(self) -> dict:
        super().clean()
        cleaned = self.cleaned_data
        password, code = cleaned.get("password"), cleaned.get("code")
        if password is None or code is None:
            return cleaned
        if authenticate(username=self.user.email, password=password) is None:
            raise forms.ValidationError("The password or the code is wrong.")
        if not two_factor.second_factor_verify(user=self.user, code=code):
            raise forms.ValidationError("The password or the code is wrong.")
        return cleaned

"""Signing up and the user's own settings."""

from __future__ import annotations

from django import forms
from django.contrib.auth import password_validation

from apps.accounts.models import User
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
        email = self.cleaned_data["email"].lower()
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError(
                "An account with this email exists already. Log in, or reset its password."
            )
        return email

    def clean(self) -> dict:
        cleaned = super().clean()
        password = cleaned.get("password")
        if password:
            candidate = User(email=cleaned.get("email", ""), name=cleaned.get("name", ""))
            try:
                password_validation.validate_password(password, candidate)
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return cleaned


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

"""Pieces several forms share."""

from __future__ import annotations

import zoneinfo
from functools import cache

from django import forms
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString


@cache
def zone_choices() -> list[tuple[str, str]]:
    """Every IANA zone, UTC first, then by name (Europe/Warsaw shown as Europe / Warsaw)."""
    names = sorted(
        z for z in zoneinfo.available_timezones() if "/" in z and not z.startswith("Etc/")
    )
    return [("UTC", "UTC")] + [(name, name.replace("/", " / ").replace("_", " ")) for name in names]


@cache
def zone_names() -> list[str]:
    """Every IANA zone name the server knows, sorted (aliases such as US/Eastern too)."""
    return sorted(zoneinfo.available_timezones())


def zone_name_choices() -> list[tuple[str, str]]:
    """`zone_names` as a field's choices (what a zone typed is checked against)."""
    return _zone_name_pairs()


@cache
def _zone_name_pairs() -> list[tuple[str, str]]:
    return [(name, name) for name in zone_names()]


class ZoneNameInput(forms.TextInput):
    """A zone typed by its name, every name offered as one types: a <datalist> the page
    fetches once, when the field is first focused (the `zone-names` page, cached by the
    browser), instead of ~600 <option>s written into the page each time. Without
    JavaScript it is a text field, checked against the same names."""

    def __init__(self, attrs: dict | None = None) -> None:
        base = {"autocomplete": "off", "spellcheck": "false", "placeholder": "e.g. Europe/Paris"}
        super().__init__({**base, **(attrs or {})})

    def render(self, name, value, attrs=None, renderer=None) -> SafeString:
        field_id = (attrs or {}).get("id") or self.attrs.get("id") or f"id_{name}"
        attrs = {**(attrs or {}), "id": field_id, "list": f"{field_id}-names"}
        return format_html(
            '{}<datalist id="{}-names" hx-get="{}" hx-trigger="focus from:#{} once"'
            ' hx-swap="innerHTML"></datalist>',
            super().render(name, value, attrs, renderer),
            field_id,
            reverse("zone-names"),
            field_id,
        )


class ZoneField(forms.ChoiceField):
    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("choices", zone_choices)
        super().__init__(**kwargs)


def apply_errors(form: forms.Form, details: dict, *, prefix: str = "") -> bool:
    """Put a DomainError's details ({path: [messages]}) on the form's fields; returns
    False when none matched a field (the caller shows the error's message instead)."""
    matched = False
    for path, messages in details.items():
        name = path.removeprefix(prefix)
        if name in form.fields and isinstance(messages, list):
            for message in messages:
                form.add_error(name, str(message))
            matched = True
    return matched

"""Pieces several forms share."""

from __future__ import annotations

import zoneinfo
from functools import cache

from django import forms


@cache
def zone_choices() -> list[tuple[str, str]]:
    """Every IANA zone, UTC first, then by name (Europe/Warsaw shown as Europe / Warsaw)."""
    names = sorted(
        z for z in zoneinfo.available_timezones() if "/" in z and not z.startswith("Etc/")
    )
    return [("UTC", "UTC")] + [(name, name.replace("/", " / ").replace("_", " ")) for name in names]


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

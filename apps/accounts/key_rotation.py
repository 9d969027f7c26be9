"""Re-encrypting stored secrets under the newest ENCRYPTION_KEYS entry, app by app.

The accounts app owns the key ring and re-encrypts the social accounts' credentials. Every
other app that seals secrets with the ring registers, from its ``AppConfig.ready()``, a
hook that re-encrypts its own rows and returns how many changed; the accounts app never
imports those apps.
"""

from __future__ import annotations

from collections.abc import Callable

from apps.accounts import services

_hooks: dict[str, Callable[[], int]] = {}


def register(what: str, rotate: Callable[[], int]) -> None:
    """Add an app's rotation. `what` names its rows in the report ("webhook secret(s)");
    registering the same name again replaces the hook."""
    _hooks[what] = rotate


def rotate_all() -> list[tuple[str, int]]:
    """Re-encrypt the social accounts' credentials, then every registered app's secrets,
    in registration order. Returns (what, how many rows changed) for each."""
    counts = [("account(s)", services.encryption_keys_rotate())]
    counts += [(what, rotate()) for what, rotate in _hooks.items()]
    return counts

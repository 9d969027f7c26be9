"""The catalog as it stands today: each platform's readiness from its live validations.

The catalog file says what each platform accepts; whether a platform is `supported` is
proven only by a passing live validation younger than VALIDATION_MAX_AGE. A platform the
file itself marks supported (the built-in sandbox) stays supported.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from types import MappingProxyType

from django.utils import timezone

from apps.providers.catalog import (
    PlatformCapabilities,
    Readiness,
    all_capabilities,
    get_capabilities,
)
from apps.providers.live.models import PlatformValidation


def current_validations(*, now: datetime | None = None) -> dict[str, PlatformValidation]:
    """The newest passing validation younger than 90 days, per platform (one query)."""
    now = now or timezone.now()
    rows = PlatformValidation.objects.current(now=now).distinct("platform")
    return {row.platform: row for row in rows}


def with_validation(
    caps: PlatformCapabilities, validation: PlatformValidation | None
) -> PlatformCapabilities:
    """`caps` with the readiness a current validation gives it (unchanged without one)."""
    if validation is None:
        return caps
    return dataclasses.replace(
        caps,
        readiness=Readiness.SUPPORTED,
        validated_at=validation.finished_at.isoformat(),
        validated_what=", ".join(validation.steps_passed),
        validation=MappingProxyType(
            {
                "passed_at": validation.finished_at.isoformat(),
                "api_version": validation.api_version,
                "steps_passed": tuple(validation.steps_passed),
            }
        ),
    )


def effective_capabilities(*, now: datetime | None = None) -> dict[str, PlatformCapabilities]:
    """Every platform in catalog order, each with its readiness as of `now`."""
    validations = current_validations(now=now)
    return {
        name: with_validation(caps, validations.get(name))
        for name, caps in all_capabilities().items()
    }


def effective_capabilities_for(
    platform: str, *, now: datetime | None = None
) -> PlatformCapabilities:
    """One platform's capabilities with its readiness as of `now`; UnknownPlatform when
    it is not catalogued."""
    caps = get_capabilities(platform)
    now = now or timezone.now()
    validation = PlatformValidation.objects.current(now=now).filter(platform=platform).first()
    return with_validation(caps, validation)

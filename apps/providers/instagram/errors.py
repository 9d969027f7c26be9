"""Instagram answers in the Graph error envelope; its subcodes (2207xxx) are read there."""

from apps.providers.meta.errors import classify

__all__ = ["classify"]

"""Threads answers in the Graph error envelope; its subcodes (4279013) are read there."""

from apps.providers.meta.errors import classify

__all__ = ["classify"]

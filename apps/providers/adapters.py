"""Imports every adapter module so each registers itself."""

from apps.providers.sandbox import adapter as _sandbox  # noqa: F401

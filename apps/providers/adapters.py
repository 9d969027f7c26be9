"""Imports every adapter module so each registers itself."""

from apps.providers.bluesky import adapter as _bluesky  # noqa: F401
from apps.providers.linkedin import adapter as _linkedin  # noqa: F401
from apps.providers.mastodon import adapter as _mastodon  # noqa: F401
from apps.providers.sandbox import adapter as _sandbox  # noqa: F401
from apps.providers.x import adapter as _x  # noqa: F401

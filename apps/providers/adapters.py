"""Imports every adapter module so each registers itself."""

from apps.providers import facebook as _facebook  # noqa: F401
from apps.providers import instagram as _instagram  # noqa: F401
from apps.providers import pinterest as _pinterest  # noqa: F401
from apps.providers import reddit as _reddit  # noqa: F401
from apps.providers import threads as _threads  # noqa: F401
from apps.providers import tiktok as _tiktok  # noqa: F401
from apps.providers import youtube as _youtube  # noqa: F401
from apps.providers.bluesky import adapter as _bluesky  # noqa: F401
from apps.providers.linkedin import adapter as _linkedin  # noqa: F401
from apps.providers.mastodon import adapter as _mastodon  # noqa: F401
from apps.providers.sandbox import adapter as _sandbox  # noqa: F401
from apps.providers.x import adapter as _x  # noqa: F401

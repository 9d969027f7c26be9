from apps.providers.live.models import PlatformValidation
from apps.providers.mastodon.models import MastodonApp

__all__ = ["MastodonApp", "PlatformValidation"]

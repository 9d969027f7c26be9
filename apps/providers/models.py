from apps.providers.mastodon.models import MastodonApp

__all__ = ["MastodonApp"]

from apps.providers.mastodon.models import MastodonApp
from apps.providers.sandbox.models import SandboxAccount, SandboxMedia, SandboxPost

__all__ = ["MastodonApp", "SandboxAccount", "SandboxMedia", "SandboxPost"]

from apps.providers.sandbox.models import SandboxAccount, SandboxMedia, SandboxPost

__all__ = ["SandboxAccount", "SandboxMedia", "SandboxPost"]

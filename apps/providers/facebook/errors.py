"""Facebook answers in the Graph error envelope (506 duplicate, 341 feed limit, 1609005 bad
link are read there)."""

from apps.providers.meta.errors import classify

__all__ = ["classify"]

"""The post's `langs`: at most three language tags, from a list or a "en, de" string."""

from __future__ import annotations

import re

MAX_LANGS = 3
# BCP-47 in practice: a 2-3 letter primary language, then subtags of 1-8 letters or digits
# (pt-BR, zh-Hant, es-419). Anything else would make the PDS refuse the whole record.
_TAG = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$")
_SEPARATORS = re.compile(r"[\s,;]+")


def post_langs(settings: dict) -> list[str]:
    """The rendition's `langs` setting (or its single `language`) as the record takes it:
    valid tags only, each once, in the order given, at most MAX_LANGS."""
    value = settings.get("langs") or settings.get("language") or []
    if isinstance(value, str):
        candidates = _SEPARATORS.split(value)
    elif isinstance(value, list | tuple):
        candidates = [item for item in value if isinstance(item, str)]
    else:
        candidates = []
    langs: list[str] = []
    for candidate in (c.strip() for c in candidates):
        if _TAG.match(candidate) and candidate.lower() not in {lang.lower() for lang in langs}:
            langs.append(candidate)
    return langs[:MAX_LANGS]

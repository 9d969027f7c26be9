"""Markup written in Python for the pages that show hundreds of rows."""

from __future__ import annotations

import html


def escape(value: object) -> str:
    """What django.utils.html.escape writes, as a plain string: without its lazy-string
    wrapper and SafeString, which cost more than the escaping when a page calls it
    thousands of times. Only for markup marked safe as a whole afterwards."""
    return html.escape(str(value))

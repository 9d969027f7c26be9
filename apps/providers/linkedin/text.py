"""LinkedIn's "little text" format for `commentary`.

Reserved characters must be backslash-escaped or LinkedIn silently truncates the text at
the first one. A `#word` becomes a hashtag template so it stays a real hashtag.
"""

import regex

_RESERVED = set("\\|{}@[]()<>#*_~")
_HASHTAG = regex.compile(r"(?:^|(?<=\s))#([\p{L}\p{N}]+)")


def _escape(text: str) -> str:
    return "".join("\\" + ch if ch in _RESERVED else ch for ch in text)


def commentary(text: str) -> str:
    out, last = [], 0
    for match in _HASHTAG.finditer(text):
        out.append(_escape(text[last : match.start()]))
        out.append("{hashtag|\\#|" + match.group(1) + "}")
        last = match.end()
    out.append(_escape(text[last:]))
    return "".join(out)

"""Link cards (`app.bsky.embed.external`).

Bluesky does not scrape links: the client supplies the card. The first link's page is
fetched once, briefly and size-capped, for its Open Graph title, description and image.
A card is decoration: any failure leaves the post without one, never fails the post.
"""

from __future__ import annotations

import codecs
import contextlib
import time
from collections.abc import Callable
from html.parser import HTMLParser
from urllib.parse import urljoin

import httpx

from apps.common import outbound
from apps.providers import httpcall
from apps.providers.errors import ProviderError

PAGE_TIMEOUT_S = 5.0
PAGE_DEADLINE_S = 10.0
PAGE_MAX_BYTES = 512 * 1024
THUMB_MAX_BYTES = 1_000_000  # the external embed's thumb limit
MAX_REDIRECTS = 3
_HEADERS = {"Accept": "text/html,image/*", "User-Agent": "Socialpost link preview"}


class _MetaParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.meta: dict[str, str] = {}
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k.lower(): v or "" for k, v in attrs}
        if tag == "meta":
            key = (values.get("property") or values.get("name") or "").lower()
            if key and key not in self.meta:
                self.meta[key] = values.get("content", "").strip()
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


def _fetch(url: str, max_bytes: int) -> tuple[str, str, bytes] | None:
    """GET a public URL (following a few redirects, each re-checked); returns (final url,
    content type, body) or None when unsafe, failing, or larger than max_bytes."""
    deadline = time.monotonic() + PAGE_DEADLINE_S  # a slow drip gets no longer than this
    with httpcall.client(timeout=PAGE_TIMEOUT_S, follow_redirects=False, tenant_host=True) as http:
        for _ in range(MAX_REDIRECTS + 1):
            try:
                httpcall.require_public_https(url)
                with http.stream("GET", url, headers=_HEADERS) as response:
                    if response.is_redirect:
                        url = urljoin(url, response.headers.get("Location", ""))
                        continue
                    if response.status_code != 200:
                        return None
                    body = b""
                    for chunk in response.iter_bytes():
                        body += chunk
                        if len(body) > max_bytes or time.monotonic() > deadline:
                            return None
                    return url, response.headers.get("Content-Type", ""), body
            except (httpx.HTTPError, outbound.ForbiddenTarget):
                return None
    return None


def link_card(url: str, upload_blob: Callable[[bytes, str], dict]) -> dict | None:
    """The external embed for `url`, or None when the page cannot be read."""
    page = _fetch(url, PAGE_MAX_BYTES)
    if page is None or "html" not in page[1]:
        return None
    final_url, content_type, body = page
    parser = _MetaParser()
    parser.feed(body.decode(_charset(content_type), errors="replace"))
    title = parser.meta.get("og:title") or parser.title.strip()
    description = parser.meta.get("og:description") or parser.meta.get("description", "")
    if not title:
        return None
    external: dict[str, object] = {
        "uri": url,
        "title": title[:300],
        "description": description[:1000],
    }
    image = parser.meta.get("og:image")
    if image:
        thumb = _fetch(urljoin(final_url, image), THUMB_MAX_BYTES)
        if thumb is not None and thumb[1].startswith("image/"):
            # A card without a picture is still a card.
            with contextlib.suppress(ProviderError):
                external["thumb"] = upload_blob(thumb[2], thumb[1].split(";")[0])
    return {"$type": "app.bsky.embed.external", "external": external}


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            try:
                return codecs.lookup(value.strip('"')).name
            except LookupError:
                break
    return "utf-8"

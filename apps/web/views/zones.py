"""The time zone names a zone field offers as one types (`ZoneNameInput`): the same for
everyone and every page, so written once per process and cached by the browser."""

from __future__ import annotations

from functools import cache

from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html_join
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from apps.web.forms.common import zone_names

MAX_AGE_S = 24 * 3600  # a new tzdata release reaches browsers within a day


@cache
def _options() -> bytes:
    return format_html_join("", '<option value="{}">', ((name,) for name in zone_names())).encode()


@require_GET
@cache_control(max_age=MAX_AGE_S, public=True)
def zone_name_options(request: HttpRequest) -> HttpResponse:
    """The <option>s of a zone field's <datalist>."""
    return HttpResponse(_options(), content_type="text/html; charset=utf-8")

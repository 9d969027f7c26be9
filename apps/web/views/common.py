"""Small helpers the page modules share."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from apps.web.access import is_htmx


def redirect_to(request: HttpRequest, url: str) -> HttpResponse:
    """Go to url: a redirect, or for htmx an HX-Redirect (a plain 302 would be followed
    inside the request and its page swapped into a fragment)."""
    if is_htmx(request):
        response = HttpResponse(status=200)
        response["HX-Redirect"] = url
        return response
    return HttpResponseRedirect(url)

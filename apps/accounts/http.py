"""Request types for pages behind a login."""

from __future__ import annotations

from django.http import HttpRequest

from apps.accounts.models import User


class AuthenticatedRequest(HttpRequest):
    """A request to a view behind `login_required` (or a decorator built on it): by the
    time the view runs its user is a `User`, never an `AnonymousUser`. Used in annotations
    only; Django still builds a plain `HttpRequest`."""

    user: User

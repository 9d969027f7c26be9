"""`Authorization: Bearer <token>` against the hashed ApiToken."""

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from apps.accounts import services
from apps.accounts.models import ApiToken


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """Sets request.auth to the ApiToken; request.user stays None (a token is not a person)."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[None, ApiToken] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        keyword, _, clear = header.partition(" ")
        if keyword.lower() != self.keyword.lower() or not clear.strip():
            raise exceptions.AuthenticationFailed(
                "Use 'Authorization: Bearer <token>'.", code="INVALID_AUTH_HEADER"
            )
        token = services.api_token_authenticate(clear.strip())
        if token is None:
            raise exceptions.AuthenticationFailed(
                "The token is unknown, has been revoked, or its creator no longer has access to "
                "its workspace.",
                code="INVALID_TOKEN",
            )
        return (None, token)

    def authenticate_header(self, request: Request) -> str:
        return self.keyword

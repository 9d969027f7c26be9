"""Small endpoints that belong to no resource."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.api.base import WorkspaceAPIView
from apps.api.schema import errors


class MeView(WorkspaceAPIView):
    """The workspace and scopes of the calling token."""

    required_scopes = {"GET": None}

    @extend_schema(
        summary="The calling token and its workspace",
        responses={
            200: inline_serializer(
                "Me",
                {
                    "workspace": inline_serializer(
                        "MeWorkspace",
                        {
                            "id": serializers.IntegerField(),
                            "slug": serializers.CharField(),
                            "name": serializers.CharField(),
                            "organization": serializers.CharField(),
                            "timezone": serializers.CharField(),
                        },
                    ),
                    "token": inline_serializer(
                        "MeToken",
                        {
                            "name": serializers.CharField(),
                            "prefix": serializers.CharField(),
                            "scopes": serializers.ListField(
                                child=serializers.CharField(),
                                help_text="What the token may do now: its granted scopes "
                                "that its creator's current role allows.",
                            ),
                            "granted_scopes": serializers.ListField(
                                child=serializers.CharField(),
                                help_text="What the token was granted (more than scopes "
                                "while its creator's role is smaller than then).",
                            ),
                        },
                    ),
                },
            ),
            **errors(),
        },
    )
    def get(self, request: Request) -> Response:
        token = request.auth
        ws = token.workspace
        return Response(
            {
                "workspace": {
                    "id": ws.pk,
                    "slug": ws.slug,
                    "name": ws.name,
                    "organization": ws.organization.slug,
                    "timezone": ws.default_timezone,
                },
                "token": {
                    "name": token.name,
                    "prefix": token.prefix,
                    "scopes": token.scopes,
                    "granted_scopes": token.granted_scopes
                    if token.granted_scopes is not None
                    else token.scopes,
                },
            }
        )

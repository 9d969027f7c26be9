"""/media: uploads, sniffed and size-checked by content."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.parsers import MultiPartParser
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors, replayed
from apps.api.serializers.media import MediaAssetSerializer, MediaUploadSerializer
from apps.publications.models import MediaAsset
from apps.publications.services import media_asset_create


class MediaViewSet(WorkspaceViewSet):
    """Media files of the token's workspace."""

    queryset = MediaAsset.objects.all()
    serializer_class = MediaAssetSerializer
    parser_classes = [MultiPartParser]
    required_scopes = {"list": "read", "retrieve": "read", "create": "write"}

    @extend_schema(
        summary="List media",
        responses={
            200: MediaAssetSerializer(many=True),
            **errors(400, codes={400: ["INVALID_CURSOR"]}),
        },
    )
    def list(self, request: ApiRequest) -> Response:
        return self.render_page(self.get_queryset())

    @extend_schema(summary="One media file", responses={200: MediaAssetSerializer, **errors(404)})
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(self.get_object())

    @extend_schema(
        summary="Upload a media file",
        description="multipart/form-data with `file` (and optional `alt_text`). The type is "
        "read from the bytes: JPEG, PNG, WebP, GIF, MP4, MOV, WebM. Too large is 413 "
        "MEDIA_TOO_LARGE; any other type is 415 MEDIA_TYPE_UNSUPPORTED; a file that would "
        "take the organization past its storage quota is 409 STORAGE_QUOTA_EXCEEDED.",
        request={"multipart/form-data": MediaUploadSerializer},
        parameters=[IDEMPOTENCY_KEY],
        responses={
            201: MediaAssetSerializer,
            **replayed(MediaAssetSerializer),
            **post_errors(
                codes={
                    400: ["MALFORMED_MULTIPART"],
                    409: ["STORAGE_QUOTA_EXCEEDED"],
                    413: ["MEDIA_TOO_LARGE"],
                    415: ["MEDIA_TYPE_UNSUPPORTED"],
                }
            ),
        },
    )
    def create(self, request: ApiRequest) -> Response:
        data = self.parse(MediaUploadSerializer)
        upload = data["file"]
        asset = media_asset_create(
            workspace=self.workspace,
            file=upload,
            created_by=self.token.created_by,
            alt_text=data.get("alt_text", ""),
            original_name=getattr(upload, "name", "") or "",
        )
        return self.render(asset, status=201)

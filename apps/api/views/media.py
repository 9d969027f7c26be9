"""/media: uploads, sniffed and size-checked by content."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.parsers import JSONParser, MultiPartParser
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors, replayed
from apps.api.serializers.media import (
    MediaAssetSerializer,
    MediaFilterSerializer,
    MediaUpdateSerializer,
    MediaUploadSerializer,
)
from apps.publications.models import MediaAsset
from apps.publications.services import media_asset_create
from apps.publications.services.media_library import media_asset_delete, media_search
from apps.publications.uploads import disk_full_refused
from apps.publishing.services.media_alt_text import media_alt_text_set


class MediaViewSet(WorkspaceViewSet):
    """Media files of the token's workspace."""

    queryset = MediaAsset.objects.all()
    serializer_class = MediaAssetSerializer
    filter_serializer = MediaFilterSerializer
    required_scopes = {
        "list": "read",
        "retrieve": "read",
        "create": "write",
        "partial_update": "write",
        "destroy": "write",
    }

    def get_parsers(self) -> list:
        # Uploads are multipart; the alt text edit is JSON.
        if self.request is not None and self.request.method == "PATCH":
            return [JSONParser()]
        return [MultiPartParser()]

    @extend_schema(
        summary="List media",
        description="Newest first. `q` finds text in the file name or alt text; `kind` "
        "keeps one kind (image, gif, video).",
        parameters=[MediaFilterSerializer],
        responses={
            200: MediaAssetSerializer(many=True),
            **errors(400, codes={400: ["INVALID_CURSOR"]}),
        },
    )
    def list(self, request: ApiRequest) -> Response:
        filters = self.parse(MediaFilterSerializer, request.query_params.dict())
        return self.render_page(
            media_search(
                self.get_queryset(), q=filters.get("q", "").strip(), kind=filters.get("kind", "")
            )
        )

    @extend_schema(summary="One media file", responses={200: MediaAssetSerializer, **errors(404)})
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(self.get_object())

    @extend_schema(
        summary="Upload a media file",
        description="multipart/form-data with `file` (and optional `alt_text`). The type is "
        "read from the bytes: JPEG, PNG, WebP, GIF, MP4, MOV, WebM. Too large is 413 "
        "MEDIA_TOO_LARGE; any other type is 415 MEDIA_TYPE_UNSUPPORTED; a file that would "
        "take the organization past its storage quota is 409 STORAGE_QUOTA_EXCEEDED. When "
        "the server's disk is full the answer is 507 INSUFFICIENT_STORAGE and nothing is "
        "kept (try again later).",
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
                    507: ["INSUFFICIENT_STORAGE"],
                }
            ),
        },
    )
    def create(self, request: ApiRequest) -> Response:
        with disk_full_refused():  # the request's temporary file is written here
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

    @extend_schema(
        summary="Set a media file's alt text",
        description="The default alt text: used by every attachment of the file that has no "
        "alt text of its own, and offered when the file is attached again. While the "
        "workspace's approval rule is on and a post past draft shows this default, a token "
        "whose creator's posts need approval is refused 403 APPROVAL_REQUIRED "
        "(`details.publications`), as editing those posts would be.",
        request=MediaUpdateSerializer,
        responses={
            200: MediaAssetSerializer,
            **errors(400, 404, codes={403: ["APPROVAL_REQUIRED"]}),
        },
    )
    def partial_update(self, request: ApiRequest, pk: str) -> Response:
        asset = self.get_object()
        data = self.parse(MediaUpdateSerializer)
        return self.render(
            media_alt_text_set(asset=asset, alt_text=data["alt_text"], actor=self.token.created_by)
        )

    @extend_schema(
        summary="Delete an unused media file",
        description="A file a publication uses is 409 MEDIA_IN_USE (its `details` list the "
        "publications); remove it from them first.",
        responses={204: None, **errors(404, 409, codes={409: ["MEDIA_IN_USE"]})},
    )
    def destroy(self, request: ApiRequest, pk: str) -> Response:
        media_asset_delete(asset=self.get_object())
        return Response(status=204)

"""Uploaded media."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.api.serializers.base import StrictSerializer
from apps.common.media_urls import signed_media_url
from apps.publications import constants
from apps.publications.models import MediaAsset


class MediaAssetSerializer(serializers.ModelSerializer):
    """An uploaded file; its kind and type were read from its content."""

    url = serializers.SerializerMethodField(help_text="A signed URL that expires.")

    class Meta:
        model = MediaAsset
        fields = [
            "id",
            "kind",
            "mime_type",
            "size_bytes",
            "width",
            "height",
            "duration_s",
            "sha256",
            "alt_text",
            "original_name",
            "url",
            "created_at",
        ]

    @extend_schema_field(serializers.URLField())
    def get_url(self, asset: MediaAsset) -> str:
        return signed_media_url(asset.file, getattr(settings, "MEDIA_URL_EXPIRE_S", 3600))


class MediaUploadSerializer(StrictSerializer):
    """POST /media (multipart/form-data)."""

    file = serializers.FileField(
        allow_empty_file=True,
        help_text="An image (JPEG, PNG, WebP, GIF) or a video (MP4, MOV, WebM); the type is "
        "read from the content, never the name.",
    )
    alt_text = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=constants.MAX_ALT_TEXT_LENGTH,
    )


class MediaUpdateSerializer(StrictSerializer):
    """PATCH /media/{id}: the file's default alt text."""

    alt_text = serializers.CharField(
        allow_blank=True,
        trim_whitespace=False,
        max_length=constants.MAX_ALT_TEXT_LENGTH,
        help_text="Used by every attachment of this file that has no alt text of its own, "
        "and offered when the file is attached again. Blank clears it.",
    )


class MediaFilterSerializer(serializers.Serializer):
    """Query parameters of GET /media."""

    q = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Text found in the file name or the alt text (case-insensitive).",
    )
    kind = serializers.ChoiceField(required=False, choices=MediaAsset.Kind.choices)

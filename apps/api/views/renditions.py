"""/renditions: one destination of a publication, and settling an ambiguous outcome."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors
from apps.api.serializers.renditions import (
    FirstCommentMarkPostedSerializer,
    RenditionResolveSerializer,
    RenditionSerializer,
)
from apps.common.errors import NotFound
from apps.publishing.services import (
    first_comment_mark_posted,
    first_comment_retry,
    rendition_resolve,
)
from apps.renditions.models import FirstComment, Rendition


class RenditionViewSet(WorkspaceViewSet):
    """Renditions of the token's workspace."""

    queryset = Rendition.objects.select_related("social_account", "publication", "first_comment")
    serializer_class = RenditionSerializer
    required_scopes = {
        "retrieve": "read",
        "resolve": "publish",
        "first_comment_retry": "publish",
        "first_comment_mark_posted": "publish",
    }

    def get_queryset(self) -> QuerySet:
        return super().get_queryset().prefetch_related("segments__media", "delivery_attempts")

    @extend_schema(
        summary="One destination of a publication",
        responses={200: RenditionSerializer, **errors(404)},
    )
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(self.get_object())

    @extend_schema(
        summary="Resolve an ambiguous outcome",
        description="For a destination whose outcome is unknown (the request may have "
        "reached the platform): after checking the platform, say it was `published` (give "
        "the post's URL or id), `failed` (there is no post; leave it failed) or `retry` "
        "(there is no post; send it again). Recorded as a delivery attempt.",
        request=RenditionResolveSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: OpenApiResponse(RenditionSerializer, "The rendition after the resolution."),
            **post_errors(404, codes={409: ["NOT_AMBIGUOUS", "MANUAL_RETRY_LIMIT"]}),
        },
    )
    @action(detail=True, methods=["post"])
    def resolve(self, request: ApiRequest, pk: str) -> Response:
        rendition = self.get_object()
        data = self.parse(RenditionResolveSerializer)
        rendition = rendition_resolve(rendition=rendition, user=self.token.created_by, **data)
        return self.render(self.get_queryset().get(pk=rendition.pk))

    def _first_comment(self) -> FirstComment:
        rendition = self.get_object()
        comment = getattr(rendition, "first_comment", None)
        if comment is None:
            raise NotFound(
                "This destination has no first comment (its post is not live yet, or the "
                "publication has none).",
                code="NO_FIRST_COMMENT",
            )
        return comment

    @extend_schema(
        summary="Post a failed first comment again",
        description="For a first comment that `failed`, or whose outcome is `unknown` after "
        "you checked the post and found no comment: it is queued to be posted again. "
        "Recorded as a delivery attempt.",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: OpenApiResponse(RenditionSerializer, "The rendition, its comment pending."),
            **post_errors(404, codes={409: ["FIRST_COMMENT_NOT_RETRYABLE"]}),
        },
    )
    @action(detail=True, methods=["post"], url_path="first-comment/retry")
    def first_comment_retry(self, request: ApiRequest, pk: str) -> Response:
        comment = self._first_comment()
        first_comment_retry(comment, actor_note=self._who())
        return self.render(self.get_queryset().get(pk=comment.rendition_id))

    @extend_schema(
        summary="Mark a first comment posted",
        description="For a first comment whose outcome is `unknown`, after you found it on "
        "the post: it is recorded as published (give its URL if you have it).",
        request=FirstCommentMarkPostedSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: OpenApiResponse(RenditionSerializer, "The rendition, its comment published."),
            **post_errors(404, codes={409: ["FIRST_COMMENT_NOT_UNKNOWN"]}),
        },
    )
    @action(detail=True, methods=["post"], url_path="first-comment/mark-posted")
    def first_comment_mark_posted(self, request: ApiRequest, pk: str) -> Response:
        comment = self._first_comment()
        data = self.parse(FirstCommentMarkPostedSerializer)
        first_comment_mark_posted(comment, url=data.get("provider_url", ""))
        return self.render(self.get_queryset().get(pk=comment.rendition_id))

    def _who(self) -> str:
        user = self.token.created_by
        return f"Checked by {user.email}: no comment found." if user else ""

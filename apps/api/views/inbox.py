"""/comments and /replies: the inbox of comments under the workspace's posts.

Reading needs read; marking done and assigning need write; replying, hiding and deleting
(writes to a platform) need publish. Where the workspace holds replies for approval, a
reply by a token whose maker is not a workspace admin waits for one (``/replies/{id}/
approve``)."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from apps.accounts.models import User
from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors
from apps.api.serializers.inbox import (
    CommentAssignSerializer,
    CommentDetailSerializer,
    CommentFilterSerializer,
    CommentHideSerializer,
    CommentSerializer,
    CommentStateSerializer,
    ReplyCreateSerializer,
    ReplyMarkSentSerializer,
    ReplySerializer,
)
from apps.common.errors import ValidationFailed
from apps.inbox.models import Comment, Reply
from apps.inbox.replies import reply_mark_sent, reply_retry
from apps.inbox.selectors import CommentFilters, comment_list, comment_thread
from apps.inbox.services import (
    comment_assign,
    comment_moderate,
    comment_set_state,
    reply_decide,
    reply_submit,
)

ACTION_CODES = {409: ["INBOX_ACTION_UNAVAILABLE", "COMMENT_DELETED"]}
HELD_CODES = {409: ["REPLY_NOT_AWAITING_APPROVAL"]}


def comment_filters(data: dict, person: User | None) -> CommentFilters:
    """The list's filters from its validated query (the API's and the MCP tool's)."""
    if data.get("assigned") == "me" and person is None:
        raise ValidationFailed(
            "This token was made without a person: nothing is assigned to it.",
            details={"assigned": ["No person behind this token."]},
        )
    state = data.get("state", "open")
    return CommentFilters(
        account=data.get("account"),
        platform=data.get("platform", ""),
        unanswered=data.get("unanswered", False),
        assigned_to=person if data.get("assigned") == "me" else None,
        state="" if state == "all" else state,
        include_ours=data.get("include_ours", False),
    )


def comment_shown(comment: Comment) -> dict:
    """A comment with what its platform allows and its thread, as GET /comments/{id}."""
    return CommentDetailSerializer(comment, context={"thread": comment_thread(comment)}).data


class CommentViewSet(WorkspaceViewSet):
    queryset = Comment.objects.filter(is_deleted=False).order_by("-commented_at", "-pk")
    serializer_class = CommentSerializer
    filter_serializer = CommentFilterSerializer
    required_scopes = {
        "list": "read",
        "retrieve": "read",
        "reply": "publish",
        "done": "write",
        "assign": "write",
        "hide": "publish",
        "remove": "publish",
    }

    def get_queryset(self) -> QuerySet:
        return super().get_queryset().select_related("assignee", "social_account")

    @extend_schema(
        summary="Comments under the workspace's posts",
        description="Newest first; open ones by default, others' comments only unless "
        "`include_ours`.",
        parameters=[CommentFilterSerializer],
        responses={200: CommentSerializer(many=True), **errors(400)},
    )
    def list(self, request: ApiRequest) -> Response:
        data = self.parse(CommentFilterSerializer, request.query_params.dict())
        person = self.token.created_by
        return self.render_page(comment_list(self.workspace, comment_filters(data, person)))

    @extend_schema(
        summary="A comment, what its platform allows, and its whole thread",
        responses={200: CommentDetailSerializer, **errors(404)},
    )
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self._detail(self.get_object())

    def _detail(self, comment: Comment, status: int = 200) -> Response:
        return Response(comment_shown(comment), status=status)

    @extend_schema(
        summary="Reply to a comment",
        description="Sent by a job under the first comment's delivery rules (never twice); "
        "held for an admin's approval where the workspace asks for it.",
        request=ReplyCreateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={201: ReplySerializer, **post_errors(404, codes=ACTION_CODES)},
    )
    @action(detail=True, methods=["post"])
    def reply(self, request: ApiRequest, pk: str) -> Response:
        comment = self.get_object()
        data = self.parse(ReplyCreateSerializer)
        reply = reply_submit(comment=comment, author=self.token.created_by, text=data["text"])
        return Response(ReplySerializer(reply).data, status=201)

    @extend_schema(
        summary="Mark a comment done (or open again)",
        request=CommentStateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: CommentDetailSerializer, **post_errors(404)},
    )
    @action(detail=True, methods=["post"])
    def done(self, request: ApiRequest, pk: str) -> Response:
        comment = comment_set_state(
            comment=self.get_object(), done=self.parse(CommentStateSerializer)["done"]
        )
        return self._detail(comment)

    @extend_schema(
        summary="Assign a comment to a member (or to nobody)",
        request=CommentAssignSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: CommentDetailSerializer, **post_errors(404)},
    )
    @action(detail=True, methods=["post"])
    def assign(self, request: ApiRequest, pk: str) -> Response:
        comment = self.get_object()
        assignee_id = self.parse(CommentAssignSerializer)["assignee"]
        assignee = User.objects.filter(pk=assignee_id).first() if assignee_id else None
        if assignee_id and assignee is None:
            raise ValidationFailed(
                "No such member.", details={"assignee": ["Not a member of this workspace."]}
            )
        return self._detail(comment_assign(comment=comment, assignee=assignee))

    @extend_schema(
        summary="Hide (or show again) a comment on its platform",
        description="Done by a job; refused where the platform does not allow it.",
        request=CommentHideSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={202: CommentDetailSerializer, **post_errors(404, codes=ACTION_CODES)},
    )
    @action(detail=True, methods=["post"])
    def hide(self, request: ApiRequest, pk: str) -> Response:
        comment = self.get_object()
        hidden = self.parse(CommentHideSerializer)["hidden"]
        comment_moderate(comment=comment, action="hide" if hidden else "unhide")
        return self._detail(comment, status=202)

    @extend_schema(
        summary="Delete a comment on its platform",
        description="Done by a job; refused where the platform does not allow it.",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={202: CommentDetailSerializer, **post_errors(404, codes=ACTION_CODES)},
    )
    # Not named `delete`: a method of that name would answer HTTP DELETE on the comment.
    @action(detail=True, methods=["post"], url_path="delete")
    def remove(self, request: ApiRequest, pk: str) -> Response:
        comment = self.get_object()
        comment_moderate(comment=comment, action="delete")
        return self._detail(comment, status=202)


class ReplyViewSet(WorkspaceViewSet):
    queryset = Reply.objects.select_related("author").order_by("-id")
    serializer_class = ReplySerializer
    required_scopes = {
        "list": "read",
        "retrieve": "read",
        "approve": "publish",
        "reject": "publish",
        "retry": "publish",
        "mark_sent": "publish",
    }

    @extend_schema(
        summary="Replies sent from the inbox",
        responses={200: ReplySerializer(many=True), **errors()},
    )
    def list(self, request: ApiRequest) -> Response:
        return self.render_page(self.get_queryset())

    @extend_schema(
        summary="A reply and its status", responses={200: ReplySerializer, **errors(404)}
    )
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(self.get_object())

    @extend_schema(
        summary="Approve a held reply (it is sent)",
        description="Needs a token made by a workspace admin.",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: ReplySerializer,
            **post_errors(404, codes={409: ["REPLY_NOT_AWAITING_APPROVAL"]}),
        },
    )
    @action(detail=True, methods=["post"])
    def approve(self, request: ApiRequest, pk: str) -> Response:
        reply = reply_decide(reply=self.get_object(), reviewer=self.token.created_by, approve=True)
        return self.render(reply)

    @extend_schema(
        summary="Reject a held reply",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: ReplySerializer,
            **post_errors(404, codes={409: ["REPLY_NOT_AWAITING_APPROVAL"]}),
        },
    )
    @action(detail=True, methods=["post"])
    def reject(self, request: ApiRequest, pk: str) -> Response:
        reply = reply_decide(reply=self.get_object(), reviewer=self.token.created_by, approve=False)
        return self.render(reply)

    @extend_schema(
        summary="Send a failed reply again, or one whose outcome is unknown after checking",
        description="For an unknown one, the caller checked the thread and found no reply.",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: ReplySerializer,
            **post_errors(404, codes={409: ["REPLY_NOT_RETRYABLE"]}),
        },
    )
    @action(detail=True, methods=["post"])
    def retry(self, request: ApiRequest, pk: str) -> Response:
        return self.render(reply_retry(reply=self.get_object()))

    @extend_schema(
        summary="Record a reply whose outcome is unknown as sent, after finding it",
        description="The caller found the reply on the platform; nothing is sent.",
        request=ReplyMarkSentSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: ReplySerializer,
            **post_errors(404, codes={409: ["REPLY_NOT_UNKNOWN"]}),
        },
    )
    @action(detail=True, methods=["post"], url_path="mark-sent")
    def mark_sent(self, request: ApiRequest, pk: str) -> Response:
        url = self.parse(ReplyMarkSentSerializer).get("url", "")
        return self.render(reply_mark_sent(reply=self.get_object(), url=url))

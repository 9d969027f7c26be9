"""/reviews: the approval workflow of publications, and /approval-rule, the workspace's rule.

A review is addressed by its publication's id. Submitting needs write; approving, asking
for changes and putting on hold need publish and a token made by a workspace admin
(approvers are people, or an operator's token made without one); the rule needs admin."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from apps.api.base import ApiRequest, WorkspaceAPIView, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors
from apps.api.serializers.reviews import (
    ApprovalRuleSerializer,
    ApprovalRuleUpdateSerializer,
    ReviewApproveSerializer,
    ReviewCommentCreateSerializer,
    ReviewCommentSerializer,
    ReviewFilterSerializer,
    ReviewSerializer,
    ReviewStepSerializer,
)
from apps.approvals.models import ApprovalRule, Review
from apps.approvals.rule import approval_rule_set
from apps.publications.models import Publication
from apps.publishing.services.reviews import (
    review_approve,
    review_comment,
    review_hold,
    review_request_changes,
    review_submit,
)

STEP_CODES = {409: ["REVISION_CONFLICT", "NOT_A_DRAFT", "ALREADY_IN_REVIEW", "NOT_IN_REVIEW"]}
HOLD_CODES = {409: ["REVISION_CONFLICT", "NOT_HOLDABLE", "PUBLICATION_STARTED"]}


class ReviewViewSet(WorkspaceViewSet):
    """Publications of the token's workspace, seen through their review."""

    queryset = Publication.objects.order_by("-id")
    serializer_class = ReviewSerializer
    filter_serializer = ReviewFilterSerializer
    required_scopes = {
        "list": "read",
        "retrieve": "read",
        "submit": "write",
        "approve": "publish",
        "request_changes": "publish",
        "hold": "publish",
        "comments": "write",
    }

    def get_queryset(self) -> QuerySet:
        return (
            super()
            .get_queryset()
            .select_related("review__requested_by", "review__decided_by", "review__decided_via")
            .prefetch_related("review_comments__author", "review_comments__portal_link")
        )

    def _person(self):
        """The token's maker; None for an operator's token (made without a person), which
        is not gated by approval and may approve, like a workspace admin."""
        return self.token.created_by

    def _answer(self, publication: Publication) -> Response:
        return self.render(self.get_queryset().get(pk=publication.pk))

    @extend_schema(
        summary="The review queue",
        description="Publications waiting for approval (or in the state asked for), the "
        "longest waiting first.",
        parameters=[ReviewFilterSerializer],
        responses={200: ReviewSerializer(many=True), **errors(400)},
    )
    def list(self, request: ApiRequest) -> Response:
        filters = self.parse(ReviewFilterSerializer, request.query_params.dict())
        state = filters.get("state", Review.State.IN_REVIEW)
        queryset = self.get_queryset().filter(review__state=state)
        return self.render_page(queryset)

    @extend_schema(
        summary="A publication's review and its comments",
        responses={200: ReviewSerializer, **errors(404)},
    )
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(self.get_object())

    @extend_schema(
        summary="Submit a draft for review",
        request=ReviewStepSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: ReviewSerializer, **post_errors(404, codes=STEP_CODES)},
    )
    @action(detail=True, methods=["post"])
    def submit(self, request: ApiRequest, pk: str) -> Response:
        return self._step(review_submit, ReviewStepSerializer)

    @extend_schema(
        summary="Approve a publication in review (schedules it)",
        description="Schedules it at its own time, or at `scheduled_at` / `local_time` "
        "(+ `timezone`) when given. Refused as scheduling would be (catalog, quotas, a time "
        "in the past). Needs a token made by a workspace admin.",
        request=ReviewApproveSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: ReviewSerializer, **post_errors(404, codes=STEP_CODES)},
    )
    @action(detail=True, methods=["post"])
    def approve(self, request: ApiRequest, pk: str) -> Response:
        return self._step(
            review_approve,
            ReviewApproveSerializer,
            scheduled_at="scheduled_at",
            local_time="local_time",
            timezone_name="timezone",
        )

    @extend_schema(
        summary="Send a publication in review back with changes requested",
        description="`note` says what should change (required). Needs a token made by a "
        "workspace admin.",
        request=ReviewStepSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: ReviewSerializer, **post_errors(404, codes=STEP_CODES)},
    )
    @action(detail=True, methods=["post"], url_path="request-changes")
    def request_changes(self, request: ApiRequest, pk: str) -> Response:
        return self._step(review_request_changes, ReviewStepSerializer)

    @extend_schema(
        summary="Put a publication on hold",
        description="A publication in review, or approved and not yet gone out: a scheduled "
        "one comes off the schedule (back to draft) and its approval is withdrawn, until "
        "it is approved again (or changes are asked for). `note` is optional. Needs a token "
        "made by a workspace admin.",
        request=ReviewStepSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: ReviewSerializer, **post_errors(404, codes=HOLD_CODES)},
    )
    @action(detail=True, methods=["post"])
    def hold(self, request: ApiRequest, pk: str) -> Response:
        return self._step(review_hold, ReviewStepSerializer)

    def _step(self, service, serializer, **optional: str) -> Response:
        """One step of the review at the revision the caller saw, with its note; optional
        maps the service's other arguments to the body fields that carry them."""
        publication = self.get_object()
        data = self.parse(serializer)
        service(
            publication=publication,
            expected_revision=data["revision"],
            actor=self._person(),
            note=data.get("note", ""),
            **{argument: data.get(field) for argument, field in optional.items()},
        )
        return self._answer(publication)

    @extend_schema(
        summary="Comment on a publication",
        request=ReviewCommentCreateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={201: ReviewCommentSerializer, **post_errors(404)},
    )
    @action(detail=True, methods=["post"])
    def comments(self, request: ApiRequest, pk: str) -> Response:
        publication = self.get_object()
        data = self.parse(ReviewCommentCreateSerializer)
        comment = review_comment(publication=publication, actor=self._person(), body=data["body"])
        return Response(ReviewCommentSerializer(comment).data, status=201)


class ApprovalRuleView(WorkspaceAPIView):
    """Whether editors' posts need an admin's approval in the token's workspace."""

    required_scopes = {"GET": "read", "PUT": "admin"}

    def _rule(self, request: Request) -> ApprovalRule:
        workspace = request.auth.workspace
        return ApprovalRule.objects.filter(workspace=workspace).first() or ApprovalRule(
            workspace=workspace, required=False, updated_at=timezone.now()
        )

    @extend_schema(
        summary="The workspace's approval rule",
        responses={200: ApprovalRuleSerializer, **errors()},
    )
    def get(self, request: Request) -> Response:
        return Response(ApprovalRuleSerializer(self._rule(request)).data)

    @extend_schema(
        summary="Require (or stop requiring) approval of editors' posts",
        request=ApprovalRuleUpdateSerializer,
        responses={200: ApprovalRuleSerializer, **errors(400)},
    )
    def put(self, request: Request) -> Response:
        serializer = ApprovalRuleUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        rule = approval_rule_set(
            workspace=request.auth.workspace,
            required=serializer.validated_data["required"],
            actor=request.auth.created_by,
        )
        return Response(ApprovalRuleSerializer(rule).data)

"""Serializers of the approval workflow: a publication's review and its comments, the
workspace's approval rule, and the bodies of each step."""

from rest_framework import serializers

from apps.api.serializers.base import (
    BooleanField,
    IntegerField,
    ScheduleTextField,
    StrictSerializer,
    TextField,
)
from apps.approvals.models import (
    MAX_COMMENT_LENGTH,
    ApprovalRule,
    PortalLink,
    Review,
    ReviewComment,
)

MAX_SMALL_INT = 32767


def _client(link: PortalLink | None) -> dict | None:
    return {"id": link.pk, "label": link.label} if link else None


class ReviewCommentSerializer(serializers.ModelSerializer):
    author = serializers.SerializerMethodField()
    client = serializers.SerializerMethodField(
        help_text="The client link it was written through (author is then null)."
    )

    class Meta:
        model = ReviewComment
        fields = ["id", "kind", "author", "client", "body", "created_at"]

    def get_author(self, comment: ReviewComment) -> dict | None:
        user = comment.author
        return {"id": user.pk, "name": user.name, "email": user.email} if user else None

    def get_client(self, comment: ReviewComment) -> dict | None:
        return _client(comment.portal_link)


class ReviewSerializer(serializers.Serializer):
    """GET /reviews/{publication id}: where the publication stands in the workflow."""

    id = serializers.IntegerField(source="pk", help_text="The publication's id.")
    publication = serializers.IntegerField(source="pk")
    publication_status = serializers.CharField(source="status")
    revision = serializers.IntegerField()
    state = serializers.SerializerMethodField(
        help_text="none (never submitted), in_review, changes_requested, approved or on_hold."
    )
    requested_by = serializers.SerializerMethodField()
    requested_at = serializers.SerializerMethodField()
    decided_by = serializers.SerializerMethodField()
    decided_at = serializers.SerializerMethodField()
    decided_via = serializers.SerializerMethodField(
        help_text="The client link the decision came through (decided_by is then null)."
    )
    approved_revision = serializers.SerializerMethodField(
        help_text="The revision the approval covers (a later one was changed by an admin); "
        "null unless approved."
    )
    comments = ReviewCommentSerializer(source="review_comments.all", many=True)

    def _review(self, publication) -> Review | None:
        return getattr(publication, "review", None)

    def _person(self, user) -> dict | None:
        return {"id": user.pk, "name": user.name, "email": user.email} if user else None

    def get_state(self, publication) -> str:
        review = self._review(publication)
        return review.state if review else "none"

    def get_requested_by(self, publication) -> dict | None:
        review = self._review(publication)
        return self._person(review.requested_by) if review else None

    def get_requested_at(self, publication) -> str | None:
        review = self._review(publication)
        return review.requested_at.isoformat() if review else None

    def get_decided_by(self, publication) -> dict | None:
        review = self._review(publication)
        return self._person(review.decided_by) if review else None

    def get_decided_at(self, publication) -> str | None:
        review = self._review(publication)
        return review.decided_at.isoformat() if review and review.decided_at else None

    def get_decided_via(self, publication) -> dict | None:
        review = self._review(publication)
        return _client(review.decided_via) if review else None

    def get_approved_revision(self, publication) -> int | None:
        review = self._review(publication)
        return review.approved_revision if review else None


class ReviewStepSerializer(StrictSerializer):
    """POST /reviews/{id}/submit and /request-changes."""

    revision = IntegerField(
        min_value=1, max_value=MAX_SMALL_INT, help_text="The revision you reviewed."
    )
    note = TextField(required=False, allow_blank=True, max_length=MAX_COMMENT_LENGTH)


class ReviewApproveSerializer(ReviewStepSerializer):
    """POST /reviews/{id}/approve: optionally at another time than the post's own."""

    scheduled_at = ScheduleTextField(required=False)
    local_time = ScheduleTextField(required=False)
    timezone = TextField(required=False, max_length=64)


class ReviewCommentCreateSerializer(StrictSerializer):
    body = TextField(max_length=MAX_COMMENT_LENGTH)


class ReviewFilterSerializer(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=Review.State.choices, required=False, help_text="Default: in_review."
    )


class ApprovalRuleSerializer(serializers.ModelSerializer):
    class Meta:
        model = ApprovalRule
        fields = ["required", "updated_at"]


class ApprovalRuleUpdateSerializer(StrictSerializer):
    required = BooleanField(help_text="true: editors' posts need an admin's approval.")

"""Serializers of the inbox: comments under the workspace's posts, their threads, replies
sent from the inbox, and the bodies of each step."""

from rest_framework import serializers

from apps.api.serializers.base import (
    BooleanField,
    IdField,
    StrictSerializer,
    TextField,
    URLField,
)
from apps.inbox.models import Comment, Reply
from apps.inbox.selectors import comment_offer

MAX_REPLY_LENGTH = 10_000


def _person(user) -> dict | None:
    return {"id": user.pk, "name": user.name, "email": user.email} if user else None


class ReplySerializer(serializers.ModelSerializer):
    author = serializers.SerializerMethodField()
    error = serializers.JSONField(source="last_error", read_only=True)

    class Meta:
        model = Reply
        fields = [
            "id",
            "comment",
            "text",
            "status",
            "author",
            "provider_reply_id",
            "provider_url",
            "sent_at",
            "error",
            "created_at",
        ]

    def get_author(self, reply: Reply) -> dict | None:
        return _person(reply.author)


class CommentSerializer(serializers.ModelSerializer):
    """A comment as the inbox lists it."""

    account = serializers.IntegerField(source="social_account_id")
    author = serializers.SerializerMethodField()
    assignee = serializers.SerializerMethodField()
    gone_at = serializers.DateTimeField(
        read_only=True,
        allow_null=True,
        help_text="When a complete read of the post no longer listed it: deleted on the platform.",
    )

    class Meta:
        model = Comment
        fields = [
            "id",
            "platform",
            "platform_id",
            "account",
            "rendition",
            "parent",
            "author",
            "text",
            "commented_at",
            "url",
            "is_ours",
            "state",
            "is_answered",
            "is_hidden",
            "gone_at",
            "assignee",
        ]

    def get_author(self, comment: Comment) -> dict:
        return {"name": comment.author_name, "handle": comment.author_handle}

    def get_assignee(self, comment: Comment) -> dict | None:
        return _person(comment.assignee)


class ThreadCommentSerializer(CommentSerializer):
    replies = ReplySerializer(many=True, read_only=True)

    class Meta(CommentSerializer.Meta):
        fields = [*CommentSerializer.Meta.fields, "replies"]


class CommentDetailSerializer(CommentSerializer):
    """One comment, what its platform allows, and the whole thread under its post."""

    allows = serializers.SerializerMethodField()
    thread = serializers.SerializerMethodField()

    class Meta(CommentSerializer.Meta):
        fields = [*CommentSerializer.Meta.fields, "allows", "thread"]

    def get_allows(self, comment: Comment) -> dict:
        offer = comment_offer(comment)
        return {
            "reply": offer.reply,
            "hide": offer.hide,
            "delete": offer.delete,
            "note": offer.note,
        }

    def get_thread(self, comment: Comment) -> list:
        return ThreadCommentSerializer(self.context["thread"], many=True).data


class CommentFilterSerializer(serializers.Serializer):
    account = serializers.IntegerField(required=False, help_text="A connected account's id.")
    platform = serializers.CharField(required=False)
    unanswered = serializers.BooleanField(required=False, help_text="Only comments not answered.")
    assigned = serializers.ChoiceField(
        choices=["me"], required=False, help_text="`me`: assigned to the token's maker."
    )
    state = serializers.ChoiceField(
        choices=["open", "done", "all"], required=False, help_text="Default: open."
    )
    include_ours = serializers.BooleanField(
        required=False, help_text="Also the account's own comments and replies."
    )


class ReplyCreateSerializer(StrictSerializer):
    text = TextField(max_length=MAX_REPLY_LENGTH)


class CommentStateSerializer(StrictSerializer):
    done = BooleanField()


class CommentAssignSerializer(StrictSerializer):
    assignee = IdField(allow_null=True, help_text="A member's user id, or null.")


class CommentHideSerializer(StrictSerializer):
    hidden = BooleanField()


class ReplyMarkSentSerializer(StrictSerializer):
    url = URLField(required=False, allow_blank=True, max_length=1000, help_text="Where it is.")

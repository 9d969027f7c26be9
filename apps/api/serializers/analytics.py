"""Analytics: a destination's metrics over time and a workspace's period."""

from __future__ import annotations

from rest_framework import serializers

from apps.api.serializers.base import MAX_ID, StrictSerializer


class MetricStateSerializer(serializers.Serializer):
    offered = serializers.BooleanField()
    reason = serializers.CharField(
        allow_null=True,
        help_text="Why it is missing: not_offered (the platform has no API for it), "
        "permission_missing, account_type, disabled (reads switched off by the operator).",
    )
    detail = serializers.CharField(allow_blank=True)


class MetricValuesSerializer(serializers.Serializer):
    likes = serializers.IntegerField(allow_null=True)
    replies = serializers.IntegerField(allow_null=True)
    reposts = serializers.IntegerField(allow_null=True)
    views = serializers.IntegerField(allow_null=True)
    clicks = serializers.IntegerField(allow_null=True)


class MetricSampleSerializer(MetricValuesSerializer):
    sampled_at = serializers.DateTimeField()


class RenditionMetricsSerializer(serializers.Serializer):
    rendition = serializers.IntegerField()
    platform = serializers.CharField()
    account = serializers.IntegerField()
    published_at = serializers.DateTimeField(allow_null=True)
    sampled_at = serializers.DateTimeField(allow_null=True, help_text="The latest read.")
    latest = MetricValuesSerializer(help_text="null: not offered (see `metrics`) or not read.")
    extra = serializers.DictField(child=serializers.IntegerField())
    metrics = serializers.DictField(child=MetricStateSerializer())
    series = MetricSampleSerializer(many=True)
    next_sync_at = serializers.DateTimeField(allow_null=True)
    stopped_reason = serializers.CharField(allow_blank=True)


class TopPostSerializer(serializers.Serializer):
    rendition = serializers.IntegerField()
    publication = serializers.IntegerField()
    platform = serializers.CharField()
    account = serializers.IntegerField()
    handle = serializers.CharField()
    url = serializers.CharField(allow_blank=True)
    text = serializers.CharField(allow_blank=True)
    published_at = serializers.DateTimeField()
    sampled_at = serializers.DateTimeField(allow_null=True)
    metrics = MetricValuesSerializer()
    engagement = serializers.IntegerField(help_text="likes + replies + reposts")


class FollowersPointSerializer(serializers.Serializer):
    sampled_at = serializers.DateTimeField()
    followers = serializers.IntegerField()


class FollowersSeriesSerializer(serializers.Serializer):
    account = serializers.IntegerField()
    platform = serializers.CharField()
    handle = serializers.CharField()
    points = FollowersPointSerializer(many=True)


class HeatCellSerializer(serializers.Serializer):
    weekday = serializers.IntegerField(help_text="0 Monday .. 6 Sunday, in `timezone`")
    hour = serializers.IntegerField()
    posts = serializers.IntegerField()
    engagement = serializers.IntegerField()


class BestTimeSerializer(serializers.Serializer):
    weekday = serializers.IntegerField()
    hour = serializers.IntegerField()
    average = serializers.FloatField()


class AnalyticsSerializer(serializers.Serializer):
    from_ = serializers.DateField()
    to = serializers.DateField()
    timezone = serializers.CharField()
    posts = serializers.IntegerField(
        help_text="Posts published in the period (those whose metrics are tracked)."
    )
    posts_read = serializers.IntegerField(help_text="Of them, those with metrics read.")
    totals = MetricValuesSerializer(help_text="Latest counts of the period's posts, summed.")
    top_posts = TopPostSerializer(many=True)
    followers = FollowersSeriesSerializer(many=True)
    heatmap = HeatCellSerializer(many=True)
    best_times = BestTimeSerializer(many=True)

    def get_fields(self) -> dict:
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")
        return fields


class AnalyticsQuerySerializer(StrictSerializer):
    from_ = serializers.DateField(required=False, help_text="First day, in the workspace's zone.")
    to = serializers.DateField(required=False, help_text="Last day (default: today).")
    account = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
        required=False,
        max_length=100,
        help_text="Account ids (repeat the parameter); default: every account.",
    )

    def get_fields(self) -> dict:
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")
        return fields

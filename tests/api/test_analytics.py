"""GET /api/v1/renditions/{id}/metrics and GET /api/v1/analytics."""

from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from apps.analytics.models import FollowersSample, MetricGap, PostMetricsSample
from apps.analytics.services import metrics_schedule_start
from apps.common.db_clock import db_now
from apps.renditions.models import Rendition
from tests.factories import RenditionFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db


def _published(workspace, *, platform="mastodon", hours_ago=30):
    account = SocialAccountFactory(workspace=workspace, platform=platform)
    rendition = RenditionFactory(
        publication__workspace=workspace,
        social_account=account,
        status=Rendition.Status.PUBLISHED,
        provider_post_id="1",
        provider_url="https://m.example/@a/1",
        published_at=db_now() - timedelta(hours=hours_ago),
    )
    metrics_schedule_start(rendition=rendition)  # as publishing does
    return rendition


def _sample(rendition, *, hours_ago, likes, views=None):
    return PostMetricsSample.objects.create(
        workspace=rendition.workspace,
        rendition=rendition,
        social_account=rendition.social_account,
        platform=rendition.platform,
        sampled_at=db_now() - timedelta(hours=hours_ago),
        likes=likes,
        replies=1,
        reposts=2,
        views=views,
    )


def test_a_destination_shows_its_series_and_what_is_not_offered(api_a, workspace_a):
    rendition = _published(workspace_a)
    _sample(rendition, hours_ago=20, likes=3)
    _sample(rendition, hours_ago=2, likes=9)
    answer = api_a.get(f"/api/v1/renditions/{rendition.pk}/metrics")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert [point["likes"] for point in body["series"]] == [3, 9]
    assert body["latest"]["likes"] == 9 and body["latest"]["views"] is None
    assert body["metrics"]["views"] == {
        "offered": False,
        "reason": "not_offered",
        "detail": "Mastodon counts no views or impressions.",
    }
    assert body["metrics"]["likes"]["offered"] is True


def test_a_permission_gap_and_a_platform_switched_off_say_so(api_a, workspace_a, settings):
    rendition = _published(workspace_a, platform="threads")
    MetricGap.objects.create(
        workspace=workspace_a,
        social_account=rendition.social_account,
        platform="threads",
        metric="likes",
        reason=MetricGap.Reason.PERMISSION,
    )
    body = api_a.get(f"/api/v1/renditions/{rendition.pk}/metrics").json()
    assert body["metrics"]["likes"]["reason"] == "permission_missing"
    settings.ANALYTICS_PLATFORMS = []
    body = api_a.get(f"/api/v1/renditions/{rendition.pk}/metrics").json()
    assert {m["reason"] for m in body["metrics"].values()} == {"disabled"}


def test_another_workspaces_rendition_is_404_in_the_envelope(api_b, workspace_a):
    rendition = _published(workspace_a)
    answer = api_b.get(f"/api/v1/renditions/{rendition.pk}/metrics")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "NOT_FOUND"


def test_another_workspaces_account_in_the_filter_is_404(api_b, workspace_a):
    theirs = _published(workspace_a).social_account_id
    answer = api_b.get("/api/v1/analytics", {"account": theirs})
    assert answer.status_code == 404
    assert answer.json()["error"]["details"] == {"account": [theirs]}


def test_without_a_token_it_is_401(workspace_a):
    rendition = _published(workspace_a)
    assert APIClient().get(f"/api/v1/renditions/{rendition.pk}/metrics").status_code == 401
    assert APIClient().get("/api/v1/analytics").status_code == 401


def test_the_period_has_totals_top_posts_followers_and_the_heatmap(api_a, workspace_a):
    workspace_a.default_timezone = "Europe/Warsaw"
    workspace_a.save(update_fields=["default_timezone"])
    quiet, loud = _published(workspace_a, hours_ago=50), _published(workspace_a, hours_ago=30)
    _sample(quiet, hours_ago=1, likes=2)
    _sample(loud, hours_ago=10, likes=5)
    _sample(loud, hours_ago=1, likes=40, views=None)
    FollowersSample.objects.create(
        workspace=workspace_a,
        social_account=loud.social_account,
        platform="mastodon",
        followers=120,
        sampled_at=db_now() - timedelta(hours=3),
    )
    body = api_a.get("/api/v1/analytics").json()
    assert body["timezone"] == "Europe/Warsaw" and body["posts"] == 2
    assert body["totals"]["likes"] == 42 and body["totals"]["views"] is None
    assert [p["rendition"] for p in body["top_posts"]] == [loud.pk, quiet.pk]
    assert body["followers"][0]["points"][0]["followers"] == 120
    assert sum(cell["posts"] for cell in body["heatmap"]) == 2
    local = loud.published_at.astimezone(__import__("zoneinfo").ZoneInfo("Europe/Warsaw"))
    assert body["best_times"][0] == {
        "weekday": local.weekday(),
        "hour": local.hour,
        "average": 43.0,
    }
    only_quiet = api_a.get("/api/v1/analytics", {"account": quiet.social_account_id}).json()
    assert only_quiet["totals"]["likes"] == 2


def test_a_bad_date_or_an_unknown_parameter_is_a_400_envelope(api_a):
    bad = api_a.get("/api/v1/analytics", {"from": "yesterday"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "VALIDATION_ERROR"
    unknown = api_a.get("/api/v1/analytics", {"acount": "1"})
    assert unknown.status_code == 400


@pytest.mark.parametrize(
    "query",
    [{"to": "0001-01-05"}, {"from": "9999-12-31"}, {"from": "0001-01-01", "to": "9999-12-31"}],
)
def test_any_date_is_a_period_even_at_the_ends_of_the_calendar(api_a, query):
    response = api_a.get("/api/v1/analytics", query)
    assert response.status_code == 200, response.content
    assert response.json()["posts"] == 0

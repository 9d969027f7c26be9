"""The analytics pages: a post's metrics per destination, the workspace's period page and
its CSV, and the best times the queue's slot editor suggests."""

import csv
import io
from datetime import timedelta

import pytest

from apps.analytics.models import FollowersSample, PostMetricsSample
from apps.analytics.services import metrics_schedule_start
from apps.common.db_clock import db_now
from apps.renditions.models import Rendition
from tests.factories import PublicationSegmentFactory, RenditionFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def read_post(workspace_a):
    account = SocialAccountFactory(workspace=workspace_a, platform="mastodon", handle="news")
    rendition = RenditionFactory(
        publication__workspace=workspace_a,
        social_account=account,
        status=Rendition.Status.PUBLISHED,
        provider_post_id="1",
        provider_url="https://m.example/@news/1",
        published_at=db_now() - timedelta(hours=30),
    )
    metrics_schedule_start(rendition=rendition)  # as publishing does
    PublicationSegmentFactory(publication=rendition.publication, text="=SUM(A1) launch day")
    for hours_ago, likes in ((20, 4), (2, 11)):
        PostMetricsSample.objects.create(
            workspace=workspace_a,
            rendition=rendition,
            social_account=account,
            platform="mastodon",
            sampled_at=db_now() - timedelta(hours=hours_ago),
            likes=likes,
            replies=2,
            reposts=1,
        )
    FollowersSample.objects.create(
        workspace=workspace_a, social_account=account, platform="mastodon", followers=321
    )
    return rendition


def test_the_post_metrics_show_a_chart_and_what_is_not_offered(as_alice, read_post):
    url = f"/w/ws-a/posts/{read_post.publication_id}/metrics/"
    page = as_alice.get(url, HTTP_HX_REQUEST="true")
    assert page.status_code == 200
    html = page.content.decode()
    assert "<svg" in html and 'aria-label="Likes: 11 on' in html
    assert "Mastodon counts no views or impressions." in html
    assert "<html" not in html  # a fragment for the post page
    assert "<html" in as_alice.get(url).content.decode()  # a page without htmx


def test_the_post_page_loads_its_metrics_lazily(as_alice, read_post):
    page = as_alice.get(f"/w/ws-a/posts/{read_post.publication_id}/").content.decode()
    assert f'hx-get="/w/ws-a/posts/{read_post.publication_id}/metrics/"' in page


def test_the_period_page_shows_totals_top_posts_followers_and_the_heatmap(as_alice, read_post):
    page = as_alice.get("/w/ws-a/analytics/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "launch day" in html and "321" in html
    assert 'class="chart heatmap"' in html and "Best times:" in html
    other = SocialAccountFactory(workspace=read_post.workspace, platform="bluesky")
    filtered = as_alice.get("/w/ws-a/analytics/", {"account": other.pk}).content.decode()
    assert "launch day" not in filtered


def test_the_csv_holds_what_is_shown_and_no_formula(as_alice, read_post):
    answer = as_alice.get("/w/ws-a/analytics/", {"format": "csv"})
    assert answer["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(answer.content.decode())))
    assert rows[0][:5] == ["published_at", "platform", "account", "url", "text"]
    assert rows[1][1:3] == ["mastodon", "news"]
    assert rows[1][4].startswith("'=SUM")
    assert rows[1][5:10] == ["11", "2", "1", "", ""]


def test_the_slot_editor_suggests_the_best_times(as_alice, read_post):
    html = as_alice.get("/w/ws-a/queue/slots/").content.decode()
    assert 'id="best-times"' in html


def test_with_nothing_read_the_slot_editor_suggests_nothing(as_alice):
    html = as_alice.get("/w/ws-a/queue/slots/").content.decode()
    assert 'id="best-times"' not in html

"""The metrics sync: schedules started by publishing, samples as rows, "not offered",
backoff on 429, read budgets, and no publish seat taken."""

from datetime import timedelta

import httpx
import pytest

from apps.analytics import jobs as analytics_jobs
from apps.analytics.models import (
    FollowersSample,
    FollowersSchedule,
    MetricGap,
    MetricsSchedule,
    PostMetricsSample,
)
from apps.analytics.sync import sync_workspace_platform
from apps.common.db_clock import db_now
from apps.jobs.errors import RetryableError, Snooze
from apps.jobs.models import Job
from apps.jobs.worker import Worker
from tests.analytics.conftest import SANDBOX, make_due, publish
from tests.factories import JobFactory

pytestmark = pytest.mark.django_db


def _metrics(views: int) -> httpx.Response:
    return httpx.Response(
        200, json={"id": "7", "likes": views // 10, "replies": 1, "reposts": 2, "views": views}
    )


def test_publishing_starts_the_post_and_account_schedules(account):
    rendition = publish(account)
    schedule = MetricsSchedule.objects.get(pk=rendition.pk)
    assert schedule.platform == "sandbox" and schedule.next_sync_at is not None
    assert FollowersSchedule.objects.filter(social_account=account).exists()
    publish_again = MetricsSchedule.objects.count()
    from apps.analytics.services import metrics_schedule_start

    metrics_schedule_start(rendition=rendition)
    assert MetricsSchedule.objects.count() == publish_again


def test_each_read_adds_a_row_and_moves_the_schedule_by_the_cadence(account, sandbox_api):
    rendition = publish(account, age=timedelta(hours=2))
    route = sandbox_api.get(f"{SANDBOX}/posts/7/metrics")
    route.side_effect = [_metrics(100), _metrics(250)]
    sandbox_api.get(f"{SANDBOX}/me").respond(200, json={"followers_count": 42})
    for _ in range(2):
        make_due(rendition)
        sync_workspace_platform(workspace_id=account.workspace_id, platform="sandbox")
    samples = list(PostMetricsSample.objects.filter(rendition=rendition).order_by("id"))
    assert [s.views for s in samples] == [100, 250]
    assert [s.likes for s in samples] == [10, 25]
    schedule = MetricsSchedule.objects.get(pk=rendition.pk)
    assert schedule.syncs == 2
    # Two hours old: read again in an hour.
    wait = schedule.next_sync_at - schedule.last_synced_at
    assert wait == timedelta(hours=1)
    assert FollowersSample.objects.get(social_account=account).followers == 42


def test_a_metric_the_platform_does_not_offer_is_null_with_its_reason(account, sandbox_api):
    rendition = publish(account)
    make_due(rendition)
    sandbox_api.get(f"{SANDBOX}/posts/7/metrics").mock(return_value=_metrics(10))
    sandbox_api.get(f"{SANDBOX}/me").respond(200, json={"followers_count": 1})
    sync_workspace_platform(workspace_id=account.workspace_id, platform="sandbox")
    sample = PostMetricsSample.objects.get(rendition=rendition)
    assert sample.clicks is None and sample.views == 10
    gap = MetricGap.objects.get(social_account=account, metric="clicks")
    assert gap.reason == MetricGap.Reason.NOT_OFFERED
    assert not MetricGap.objects.filter(social_account=account, metric="views").exists()


def test_a_missing_permission_is_recorded_and_adds_no_empty_sample(account, sandbox_api):
    rendition = publish(account)
    make_due(rendition)
    sandbox_api.get(f"{SANDBOX}/posts/7/metrics").respond(403, json={"error": "scope"})
    sandbox_api.get(f"{SANDBOX}/me").respond(200, json={"followers_count": 1})
    sync_workspace_platform(workspace_id=account.workspace_id, platform="sandbox")
    assert not PostMetricsSample.objects.exists()
    assert MetricGap.objects.get(metric="likes").reason == MetricGap.Reason.PERMISSION
    assert MetricsSchedule.objects.get(pk=rendition.pk).next_sync_at > db_now()


def test_a_429_ends_the_run_with_the_platform_retry_after(account, sandbox_api):
    rendition = publish(account)
    make_due(rendition)
    sandbox_api.get(f"{SANDBOX}/posts/7/metrics").respond(
        429, json={"error": "rate_limited"}, headers={"Retry-After": "120"}
    )
    with pytest.raises(RetryableError) as err:
        sync_workspace_platform(workspace_id=account.workspace_id, platform="sandbox")
    assert err.value.kind == "rate_limited"
    assert err.value.retry_at >= db_now() + timedelta(seconds=110)
    assert not PostMetricsSample.objects.exists()
    # Still due: the next run reads it.
    assert MetricsSchedule.objects.get(pk=rendition.pk).next_sync_at <= db_now()


def test_the_job_backs_off_past_retry_after_on_a_429(account, sandbox_api):
    rendition = publish(account)
    make_due(rendition)
    sandbox_api.get(f"{SANDBOX}/posts/7/metrics").respond(429, headers={"Retry-After": "300"})
    analytics_jobs.analytics_sweep()
    worker = Worker(threads=1, batch_size=10, poll_s=0.05, heartbeat_s=1, stale_after_s=10)
    [job] = [j for j in worker.claim_batch() if j.type == analytics_jobs.SYNC_JOB]
    assert worker.run_one(job) == "pending"
    job.refresh_from_db()
    assert job.run_at >= db_now() + timedelta(seconds=290)
    assert job.last_error["kind"] == "rate_limited"


def test_the_sync_job_holds_no_publish_seat(account, sandbox_api, org_a):
    org_a.inflight_cap = 1
    org_a.save(update_fields=["inflight_cap"])
    JobFactory(
        organization=org_a,
        status="processing",
        lease="00000000-0000-0000-0000-000000000001",
        locked_at=db_now(),
    )
    waiting_publish = JobFactory(organization=org_a)
    rendition = publish(account)
    make_due(rendition)
    sandbox_api.get(f"{SANDBOX}/posts/7/metrics").mock(return_value=_metrics(5))
    sandbox_api.get(f"{SANDBOX}/me").respond(200, json={"followers_count": 1})
    assert analytics_jobs.analytics_sweep() == 1
    worker = Worker(threads=1, batch_size=10, poll_s=0.05, heartbeat_s=1, stale_after_s=10)
    claimed = worker.claim_batch()
    assert [j.type for j in claimed] == [analytics_jobs.SYNC_JOB]
    assert claimed[0].seat == "none" and claimed[0].lane == "sandbox"
    assert worker.run_one(claimed[0]) == "done"
    assert PostMetricsSample.objects.filter(rendition=rendition).count() == 1
    assert Job.objects.get(pk=waiting_publish.pk).status == "pending"


def test_a_spent_daily_budget_snoozes_the_job(account, sandbox_api, settings):
    settings.ANALYTICS_DAILY_READ_BUDGET = {"sandbox": 1}
    first, second = publish(account, post_id="7"), publish(account, post_id="8")
    make_due(first)
    make_due(second)
    sandbox_api.get(url__regex=rf"{SANDBOX}/posts/\d+/metrics").mock(return_value=_metrics(5))
    with pytest.raises(Snooze):
        sync_workspace_platform(workspace_id=account.workspace_id, platform="sandbox")
    assert PostMetricsSample.objects.count() == 1


def test_a_platform_switched_off_is_neither_swept_nor_read(account, sandbox_api, settings):
    settings.ANALYTICS_PLATFORMS = ["mastodon"]
    make_due(publish(account))
    assert analytics_jobs.analytics_sweep() == 0
    assert sync_workspace_platform(workspace_id=account.workspace_id, platform="sandbox") == 0
    assert not sandbox_api.calls


def test_a_deleted_post_stops_its_reads(account, sandbox_api):
    rendition = publish(account)
    make_due(rendition)
    sandbox_api.get(f"{SANDBOX}/posts/7/metrics").respond(404, json={"error": "not_found"})
    sandbox_api.get(f"{SANDBOX}/me").respond(200, json={"followers_count": 1})
    sync_workspace_platform(workspace_id=account.workspace_id, platform="sandbox")
    schedule = MetricsSchedule.objects.get(pk=rendition.pk)
    assert schedule.next_sync_at is None and schedule.last_error["http_status"] == 404


def test_the_read_at_90_days_is_the_last(account, sandbox_api):
    rendition = publish(account, age=timedelta(days=91))
    make_due(rendition)
    sandbox_api.get(f"{SANDBOX}/posts/7/metrics").mock(return_value=_metrics(9))
    sandbox_api.get(f"{SANDBOX}/me").respond(200, json={"followers_count": 1})
    sync_workspace_platform(workspace_id=account.workspace_id, platform="sandbox")
    schedule = MetricsSchedule.objects.get(pk=rendition.pk)
    assert schedule.next_sync_at is None and schedule.stopped_reason == "age"


@pytest.mark.parametrize(
    "name", ["analytics_metricsschedule", "analytics_followersschedule", "analytics_readbudget"]
)
def test_admin_changelist_renders(admin_client, account, name):
    from django.urls import reverse

    publish(account)
    assert admin_client.get(reverse(f"admin:{name}_changelist")).status_code == 200


def test_a_readers_bug_on_one_post_does_not_stall_the_others(account, sandbox_api, monkeypatch):
    from apps.providers.metrics import get_reader

    broken, fine = publish(account, post_id="7"), publish(account, post_id="8")
    make_due(broken)
    make_due(fine)
    reader = get_reader("sandbox")
    original = reader.read_post_metrics

    def read(ctx, post):
        if post.provider_post_id == "7":
            raise KeyError("likes")
        return original(ctx, post)

    monkeypatch.setattr(reader, "read_post_metrics", read)
    sandbox_api.get(f"{SANDBOX}/posts/8/metrics").mock(return_value=_metrics(5))
    sandbox_api.get(f"{SANDBOX}/me").respond(200, json={"followers_count": 1})
    assert sync_workspace_platform(workspace_id=account.workspace_id, platform="sandbox") == 2
    assert PostMetricsSample.objects.filter(rendition=fine).count() == 1
    stuck = MetricsSchedule.objects.get(pk=broken.pk)
    assert stuck.last_error["kind"] == "errored"
    assert stuck.next_sync_at > db_now() + timedelta(hours=23)  # not read again at once


def test_connecting_an_account_starts_its_followers_and_a_reconnect_resumes_them(account):
    from django.db import transaction

    from apps.common import events

    schedule = FollowersSchedule.objects.get(social_account=account)
    FollowersSchedule.objects.filter(pk=schedule.pk).update(next_sync_at=None)
    with transaction.atomic():
        events.emit(events.ACCOUNT_CONNECTED, account=account)
    assert FollowersSchedule.objects.get(pk=schedule.pk).next_sync_at is not None


def test_a_platform_without_follower_counts_stops_asking(account, sandbox_api, monkeypatch):
    from apps.providers.metrics import Offers, get_reader

    reader = get_reader("sandbox")
    monkeypatch.setattr(reader, "offers", Offers(post=frozenset({"likes"}), followers=False))
    FollowersSchedule.objects.filter(social_account=account).update(
        next_sync_at=db_now() - timedelta(seconds=1)
    )
    assert sync_workspace_platform(workspace_id=account.workspace_id, platform="sandbox") == 0
    assert FollowersSchedule.objects.get(social_account=account).next_sync_at is None
    assert analytics_jobs.analytics_sweep() == 0  # nothing due: no job for nothing
    assert not sandbox_api.calls

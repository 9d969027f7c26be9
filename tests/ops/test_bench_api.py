"""A short bench_api run: gunicorn serves the API, creates and reads are measured."""

import io

import pytest

from apps.publications.models import Publication
from loadtest.bench_api import ApiBench, ApiBenchConfig
from tests.processes import test_database_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_short_api_benchmark_reports_rates_and_latencies():
    config = ApiBenchConfig(
        creates=6,
        serial_creates=3,
        reads=12,
        concurrency=3,
        web_workers=1,
        database_url=test_database_url(),
    )
    figures = ApiBench(config=config, progress=io.StringIO()).run()

    assert figures["create_c1_requests"] == 3
    assert figures["create_requests"] == 6
    assert figures["read_requests"] == 12
    for key in ("create_c1_requests_per_s", "create_requests_per_s", "read_requests_per_s"):
        assert figures[key] > 0
    assert 0 < figures["create_c1_latency_p50_ms"] <= figures["create_c1_latency_p99_ms"]
    assert 0 < figures["create_latency_p50_ms"] <= figures["create_latency_p99_ms"]
    assert 0 < figures["read_latency_p50_ms"] <= figures["read_latency_p99_ms"]
    assert not Publication.objects.exists()  # the run cleans up after itself


def test_a_short_bulk_benchmark_reports_items_per_second():
    config = ApiBenchConfig(
        bulk=True,
        bulk_items=30,
        bulk_accounts=3,
        bulk_batch=10,
        web_workers=1,
        database_url=test_database_url(),
    )
    figures = ApiBench(config=config, progress=io.StringIO()).run()

    assert figures["bulk_items"] == 30
    assert figures["bulk_requests"] == 3
    assert figures["bulk_items_per_s"] > 0
    assert figures["bulk_total_s"] > 0
    assert not Publication.objects.exists()

"""apps.common.table_stats: statistics refreshed once a table outgrows them."""

import pytest
from django.db import connection

from apps.common.table_stats import analyze_stale
from apps.publications.models import Publication
from apps.renditions.models import Rendition

pytestmark = pytest.mark.django_db(transaction=True)  # ANALYZE outside a test transaction


def _flush_counters():
    """This connection's row counters, published to pg_stat_* now (not within a second)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")


def _add_publications(workspace, count):
    Publication.objects.bulk_create(Publication(workspace=workspace) for _ in range(count))
    _flush_counters()


def test_a_table_grown_past_its_statistics_is_analyzed_once(workspace_a):
    _add_publications(workspace_a, 1200)

    assert analyze_stale([Publication, Rendition]) == ["publications_publication"]
    _flush_counters()
    assert analyze_stale([Publication, Rendition]) == []
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'publications_publication'")
        assert cursor.fetchone()[0] >= 1200


def test_a_change_small_against_the_table_or_the_minimum_is_left_to_autovacuum(workspace_a):
    _add_publications(workspace_a, 1200)
    assert analyze_stale([Publication], min_changed=5000) == []
    assert analyze_stale([Publication]) == ["publications_publication"]

    _add_publications(workspace_a, 1100)  # fewer than the 1,200 the statistics know of

    assert analyze_stale([Publication]) == []


def test_a_bulk_create_asks_for_it_once_committed(workspace_a, monkeypatch):
    from apps.publishing.services import bulk

    asked = []
    monkeypatch.setattr(
        bulk.table_stats, "analyze_stale", lambda models: asked.append(connection.in_atomic_block)
    )

    bulk.publications_bulk_create(workspace=workspace_a, author=None, items=[{"text": "Hi"}])

    assert asked == [False]  # once, after the COMMIT
    assert Publication.objects.count() == 1

from datetime import UTC, datetime

import pytest

from apps.publishing.delivery import enqueue
from tests.factories import RenditionFactory


def test_schedule_delivery_only_takes_a_scheduled_rendition(db):
    enqueue.rendition_schedule_delivery(RenditionFactory(status="scheduled"))

    with pytest.raises(ValueError):
        enqueue.rendition_schedule_delivery(RenditionFactory(status="draft"))


def test_cancel_delivery_drops_a_pending_retry(db):
    rendition = RenditionFactory(status="failed", next_retry_at=datetime(2030, 1, 1, tzinfo=UTC))

    enqueue.rendition_cancel_delivery(rendition)

    rendition.refresh_from_db()
    assert rendition.next_retry_at is None

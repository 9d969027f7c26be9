"""What people do to renditions: manual retry, resolving unknown outcomes, cancelling."""

import pytest

from apps.common.errors import Conflict, ValidationFailed
from apps.jobs.models import Job
from apps.publishing import services
from apps.publishing.delivery.enqueue import publish_dedupe_key, schedule_publish
from apps.renditions.models import Rendition
from tests.factories import RenditionFactory, RenditionSegmentFactory

ERROR = {"kind": "content_rejected", "message": "No.", "retryable": False, "action": "edit"}
UNKNOWN = {"kind": "outcome_unknown", "message": "No answer.", "action": "verify"}


def failed(**fields) -> Rendition:
    fields.setdefault("last_error", UNKNOWN if fields.get("ambiguous") else ERROR)
    rendition = RenditionFactory(status="failed", **fields)
    RenditionSegmentFactory(rendition=rendition, position=0, text="hi")
    return rendition


def test_retry_schedules_a_publish_job_now_and_counts_it(db):
    rendition = failed()
    services.rendition_retry(rendition=rendition)
    rendition.refresh_from_db()
    assert rendition.status == "scheduled"
    assert rendition.manual_retry_count == 1
    assert Job.objects.get(dedupe_key=publish_dedupe_key(rendition.pk)).status == "pending"


def test_retry_is_limited_to_six_per_rendition(db):
    rendition = failed(manual_retry_count=6)
    with pytest.raises(Conflict) as err:
        services.rendition_retry(rendition=rendition)
    assert err.value.code == "MANUAL_RETRY_LIMIT"


def test_an_ambiguous_rendition_is_resolved_not_retried(db):
    rendition = failed(ambiguous=True)
    with pytest.raises(Conflict) as err:
        services.rendition_retry(rendition=rendition)
    assert err.value.code == "AMBIGUOUS_OUTCOME"


def test_a_published_rendition_cannot_be_retried(db):
    rendition = RenditionFactory(status="published", published_at="2026-01-01T00:00Z")
    with pytest.raises(Conflict) as err:
        services.rendition_retry(rendition=rendition)
    assert err.value.code == "NOT_RETRYABLE"


def test_publication_retry_only_touches_clean_failures(db):
    clean = failed()
    publication = clean.publication
    ambiguous = failed(publication=publication, ambiguous=True, last_error=UNKNOWN)
    published = RenditionFactory(
        publication=publication, status="published", published_at="2026-01-01T00:00Z"
    )
    retried = services.publication_retry(publication=publication)
    assert [r.pk for r in retried] == [clean.pk]
    ambiguous.refresh_from_db()
    published.refresh_from_db()
    assert (ambiguous.status, published.status) == ("failed", "published")


def test_resolve_as_published_records_the_url_and_the_decision(db, alice):
    rendition = failed(ambiguous=True, last_error=UNKNOWN)
    services.rendition_resolve(
        rendition=rendition, outcome="published", provider_url="https://x.test/p/1", user=alice
    )
    rendition.refresh_from_db()
    assert rendition.status == "published"
    assert rendition.provider_url == "https://x.test/p/1"
    assert rendition.ambiguous is False
    assert rendition.segments.get().provider_url == "https://x.test/p/1"
    attempt = rendition.delivery_attempts.get()
    assert (attempt.kind, attempt.outcome) == ("resolve", "resolved")
    assert "alice@example.com" in attempt.note


def test_resolve_as_published_needs_a_url(db):
    rendition = failed(ambiguous=True, last_error=UNKNOWN)
    with pytest.raises(ValidationFailed):
        services.rendition_resolve(rendition=rendition, outcome="published")


def test_resolve_as_failed_clears_the_flag_and_keeps_it_failed(db):
    rendition = failed(ambiguous=True, last_error=UNKNOWN)
    services.rendition_resolve(rendition=rendition, outcome="failed")
    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == ("failed", False)
    assert rendition.last_error["retryable"] is False


def test_resolve_as_retry_schedules_it(db):
    rendition = failed(ambiguous=True, last_error=UNKNOWN)
    services.rendition_resolve(rendition=rendition, outcome="retry")
    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == ("scheduled", False)
    assert Job.objects.filter(dedupe_key=publish_dedupe_key(rendition.pk)).exists()


def test_only_an_ambiguous_rendition_can_be_resolved(db):
    with pytest.raises(Conflict) as err:
        services.rendition_resolve(rendition=failed(), outcome="failed")
    assert err.value.code == "NOT_AMBIGUOUS"


def test_an_unknown_resolution_is_refused(db):
    with pytest.raises(ValidationFailed):
        services.rendition_resolve(rendition=failed(ambiguous=True), outcome="maybe")


def test_cancel_drops_the_pending_job(db):
    rendition = RenditionFactory(status="scheduled")
    schedule_publish(rendition, run_at=None)
    services.rendition_cancel(rendition=rendition)
    rendition.refresh_from_db()
    assert rendition.status == "cancelled"
    assert Job.objects.get(dedupe_key=publish_dedupe_key(rendition.pk)).status == "cancelled"


@pytest.mark.parametrize("status", ["publishing", "waiting"])
def test_cancel_leaves_work_in_flight_alone(db, status):
    with pytest.raises(Conflict) as err:
        services.rendition_cancel(rendition=RenditionFactory(status=status))
    assert err.value.code == "NOT_CANCELLABLE"

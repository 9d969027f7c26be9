from datetime import UTC, datetime

import pytest
from django.urls import reverse

from tests.factories import RenditionFactory, RenditionSegmentFactory


@pytest.fixture
def renditions(workspace_a):
    failed = RenditionFactory(
        publication__workspace=workspace_a,
        status="failed",
        ambiguous=True,
        last_error={"kind": "outcome_unknown", "message": "timed out"},
    )
    RenditionSegmentFactory(rendition=failed, text="Segment text")
    limited = RenditionFactory(
        publication__workspace=workspace_a,
        status="failed",
        last_error={"kind": "rate_limited", "message": "slow down"},
    )
    done = RenditionFactory(
        publication__workspace=workspace_a, status="published", published_at=datetime.now(UTC)
    )
    return failed, limited, done


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"q": "account"},
        {"status": "failed"},
        {"platform": "sandbox"},
        {"ambiguous__exact": "1"},
        {"error_kind": "rate_limited"},
    ],
)
def test_changelist_renders(admin_client, renditions, params):
    response = admin_client.get(reverse("admin:renditions_rendition_changelist"), params)

    assert response.status_code == 200


def test_error_kind_filter(admin_client, renditions):
    failed, limited, _done = renditions
    url = reverse("admin:renditions_rendition_changelist")

    found = admin_client.get(url, {"error_kind": "rate_limited"}).context["cl"].result_list

    assert list(found) == [limited]


def test_change_page_is_read_only(admin_client, renditions):
    failed = renditions[0]

    page = admin_client.get(reverse("admin:renditions_rendition_change", args=[failed.pk]))

    assert page.status_code == 200
    assert b"Segment text" in page.content
    assert b'name="status"' not in page.content

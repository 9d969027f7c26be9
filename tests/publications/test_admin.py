from datetime import UTC, datetime

import pytest
from django.urls import reverse

from tests.factories import (
    MediaAssetFactory,
    PublicationFactory,
    PublicationSegmentFactory,
    RenditionFactory,
)


@pytest.fixture
def rows(workspace_a):
    publication = PublicationFactory(workspace=workspace_a, status="partially_published")
    PublicationSegmentFactory(publication=publication, text="Hello admin")
    RenditionFactory(publication=publication, status="published", published_at=datetime.now(UTC))
    RenditionFactory(
        publication=publication,
        status="failed",
        ambiguous=True,
        last_error={"kind": "outcome_unknown", "message": "timed out"},
    )
    MediaAssetFactory(workspace=workspace_a)
    return publication


@pytest.mark.parametrize(
    "name, params",
    [
        ("publications_publication", {}),
        ("publications_publication", {"q": "Hello"}),
        ("publications_publication", {"status": "partially_published"}),
        ("publications_publication", {"ambiguous": "yes"}),
        ("publications_publication", {"ambiguous": "no"}),
        ("publications_mediaasset", {}),
        ("publications_mediaasset", {"q": "picture", "kind": "image"}),
    ],
)
def test_changelist_renders(admin_client, rows, name, params):
    response = admin_client.get(reverse(f"admin:{name}_changelist"), params)

    assert response.status_code == 200


def test_ambiguous_filter_finds_publications_with_an_ambiguous_rendition(
    admin_client, rows, workspace_a
):
    calm = PublicationFactory(workspace=workspace_a)
    url = reverse("admin:publications_publication_changelist")

    flagged = admin_client.get(url, {"ambiguous": "yes"}).context["cl"].result_list
    others = admin_client.get(url, {"ambiguous": "no"}).context["cl"].result_list

    assert list(flagged) == [rows]
    assert list(others) == [calm]


def test_publication_page_shows_renditions_inline(admin_client, rows):
    page = admin_client.get(reverse("admin:publications_publication_change", args=[rows.pk]))

    assert page.status_code == 200
    assert b"outcome_unknown: timed out" in page.content
    assert b"Hello admin" in page.content


def test_cancel_action_uses_the_service(admin_client, workspace_a):
    publication = PublicationFactory(workspace=workspace_a)
    RenditionFactory(publication=publication, status="scheduled")

    admin_client.post(
        reverse("admin:publications_publication_changelist"),
        {"action": "cancel", "_selected_action": [publication.pk]},
    )

    publication.refresh_from_db()
    assert (publication.status, publication.revision) == ("cancelled", 2)


def test_a_files_alt_text_is_not_changed_in_the_admin(admin_client, workspace_a):
    # It is part of every post that shows it: the media library and the API change it,
    # under the approval rule (apps.publishing.services.media_alt_text).
    asset = MediaAssetFactory(workspace=workspace_a, alt_text="A red door")
    url = reverse("admin:publications_mediaasset_change", args=[asset.pk])

    page = admin_client.get(url)
    assert page.status_code == 200
    assert 'name="alt_text"' not in page.content.decode()

    admin_client.post(
        url,
        {
            "original_name": asset.original_name,
            "workspace": asset.workspace_id,
            "alt_text": "Changed behind the rule",
        },
    )
    asset.refresh_from_db()
    assert asset.alt_text == "A red door"

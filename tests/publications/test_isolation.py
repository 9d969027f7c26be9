"""Every workspace-owned model answers for_workspace() with its own rows only."""

import pytest

from apps.publications.models import MediaAsset, Publication, PublicationSegment, SegmentMedia
from apps.renditions.models import Rendition, RenditionMedia, RenditionSegment
from tests.factories import RenditionMediaFactory, SegmentMediaFactory


@pytest.fixture
def rows(workspace_a, workspace_b):
    mine = SegmentMediaFactory(segment__publication__workspace=workspace_a)
    theirs = SegmentMediaFactory(segment__publication__workspace=workspace_b)
    RenditionMediaFactory(rendition_segment__rendition__publication=mine.segment.publication)
    RenditionMediaFactory(rendition_segment__rendition__publication=theirs.segment.publication)


@pytest.mark.parametrize(
    "model",
    [
        Publication,
        PublicationSegment,
        SegmentMedia,
        MediaAsset,
        Rendition,
        RenditionSegment,
        RenditionMedia,
    ],
)
def test_for_workspace_returns_only_that_workspaces_rows(rows, workspace_a, workspace_b, model):
    assert model.objects.count() > model.objects.for_workspace(workspace_a).count() > 0
    ids_a = set(model.objects.for_workspace(workspace_a).values_list("pk", flat=True))
    ids_b = set(model.objects.for_workspace(workspace_b).values_list("pk", flat=True))
    assert ids_a and ids_b and not ids_a & ids_b

"""One workspace scope for every workspace-owned model, whether the row holds its workspace
or reaches it through a parent."""

import pytest
from django.apps import apps

from apps.common.querysets import WorkspaceQuerySet
from tests.factories import (
    PublicationSegmentFactory,
    RenditionFactory,
    RenditionMediaFactory,
    SegmentMediaFactory,
    SocialAccountFactory,
)


@pytest.mark.parametrize(
    "factory, workspace_of",
    [
        (SocialAccountFactory, lambda row: row.workspace),
        (RenditionFactory, lambda row: row.workspace),
        (PublicationSegmentFactory, lambda row: row.publication.workspace),
        (SegmentMediaFactory, lambda row: row.segment.publication.workspace),
        (RenditionMediaFactory, lambda row: row.rendition_segment.rendition.workspace),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_a_row_is_found_in_its_workspace_only(factory, workspace_of, workspace_a, workspace_b):
    mine = factory()
    model = type(mine)

    scoped = model.objects.for_workspace(workspace_of(mine))
    elsewhere = model.objects.for_workspace(workspace_b)

    assert list(scoped) == [mine]
    assert not elsewhere.filter(pk=mine.pk).exists()


def test_every_model_scoped_by_workspace_uses_the_one_queryset():
    scoped = [
        model._meta.label
        for model in apps.get_models()
        if hasattr(model._default_manager, "for_workspace")
    ]
    shared = [
        model._meta.label
        for model in apps.get_models()
        if isinstance(model._default_manager.all(), WorkspaceQuerySet)
    ]

    assert "publications.Publication" in shared
    # Only the webhooks app's models may still define a scope of their own.
    assert [label for label in set(scoped) - set(shared) if not label.startswith("webhooks.")] == []

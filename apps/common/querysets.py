"""The workspace-scoped queryset every workspace-owned model's manager builds on.

Tenant isolation is by workspace (DESIGN.md §10): views and services look rows up through
``Model.objects.for_workspace(workspace)``, so another workspace's id is simply not found.
"""

from __future__ import annotations

from typing import Self, TypeVar

from django.db import models

_M = TypeVar("_M", bound=models.Model)


class WorkspaceQuerySet(models.QuerySet[_M]):
    """Rows of one workspace. A model that reaches its workspace through a parent row sets
    ``workspace_path`` to the lookup (``"publication__workspace"``)."""

    workspace_path = "workspace"

    # Typed as any model: common imports no app (the workspace is accounts.Workspace).
    # Its id does as well, as in any filter.
    def for_workspace(self, workspace: models.Model | int) -> Self:
        return self.filter(**{self.workspace_path: workspace})

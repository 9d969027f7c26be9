"""Writes to a publication's own media. Writes that touch renditions too (creating,
editing, scheduling, cancelling publications) are in ``apps.publishing.services``."""

from apps.publications.services.media import media_asset_create, organization_storage_used

__all__ = ["media_asset_create", "organization_storage_used"]

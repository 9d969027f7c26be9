"""Publications (the source intent), their ordered segments, and the media they attach."""

from apps.publications.models.media import MediaAsset
from apps.publications.models.publication import Publication, PublicationSegment, SegmentMedia

__all__ = ["MediaAsset", "Publication", "PublicationSegment", "SegmentMedia"]

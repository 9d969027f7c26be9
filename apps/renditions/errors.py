"""Typed refusals of the rendition state machine."""

from apps.common.errors import Conflict


class InvalidTransition(Conflict):
    """A status change the state machine does not allow (see Rendition's docstring)."""

    code = "INVALID_TRANSITION"


class RenditionChanged(Conflict):
    """The row's status changed under the caller (another worker or a person acted first);
    the caller's copy is stale and nothing was written."""

    code = "RENDITION_CHANGED"


class SegmentAlreadyPublished(Conflict):
    """A segment that already has a provider id is never published again."""

    code = "SEGMENT_ALREADY_PUBLISHED"

"""Renditions: one per destination account of a publication, with their content."""

from apps.renditions.models.attempt import DeliveryAttempt
from apps.renditions.models.comment import FirstComment
from apps.renditions.models.content import RenditionMedia, RenditionSegment
from apps.renditions.models.rendition import ERROR_KEYS, Rendition, normalize_error

__all__ = [
    "ERROR_KEYS",
    "DeliveryAttempt",
    "FirstComment",
    "Rendition",
    "RenditionMedia",
    "RenditionSegment",
    "normalize_error",
]

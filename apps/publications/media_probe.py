"""What an uploaded file really is, read from its bytes (never its name or the client's
Content-Type): kind, MIME type, and dimensions or duration where they are cheap to read.

Images go through Pillow, which reads only the header to know the size (and refuses
decompression bombs). MP4 and QuickTime files are walked box by box to the movie header
(duration) and the first visual track header (dimensions) without decoding anything.
WebM is recognized by its signature; its duration is not read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import BinaryIO

from PIL import Image, UnidentifiedImageError

from apps.common.errors import ValidationFailed

IMAGE_FORMATS = {
    "JPEG": "image/jpeg",
    "MPO": "image/jpeg",
    "PNG": "image/png",
    "WEBP": "image/webp",
}
# ISO base media brands that are still images or audio, not video.
NON_VIDEO_BRANDS = {b"heic", b"heix", b"mif1", b"msf1", b"avif", b"M4A ", b"M4B ", b"F4A "}
WEBM_SIGNATURE = b"\x1a\x45\xdf\xa3"
MAX_BOXES = 10_000  # a hostile file cannot make the walk run forever


@dataclass(frozen=True)
class Probe:
    kind: str  # image, video, gif
    mime_type: str
    width: int | None = None
    height: int | None = None
    duration_s: float | None = None


def unsupported(message: str) -> ValidationFailed:
    return ValidationFailed(message, code="MEDIA_TYPE_UNSUPPORTED", details={"file": [message]})


def probe(fh: BinaryIO) -> Probe:
    """Identify the file; MEDIA_TYPE_UNSUPPORTED (ValidationFailed) when it is neither a
    JPEG, PNG, WebP or GIF image nor an MP4, QuickTime or WebM video."""
    fh.seek(0)
    head = fh.read(16)
    fh.seek(0)
    if len(head) >= 12 and head[4:8] == b"ftyp":
        if head[8:12] in NON_VIDEO_BRANDS:
            raise unsupported("HEIF/AVIF images and audio files are not supported.")
        return _probe_iso_media(fh, brand=head[8:12])
    if head.startswith(WEBM_SIGNATURE):
        return Probe(kind="video", mime_type="video/webm")
    return _probe_image(fh)


def _probe_image(fh: BinaryIO) -> Probe:
    try:
        with Image.open(fh) as image:
            fmt = image.format
            width, height = image.size
            frames = getattr(image, "n_frames", 1)
    except Image.DecompressionBombError:
        raise ValidationFailed(
            "The image has too many pixels.",
            code="MEDIA_TOO_LARGE",
            details={"file": ["Too many pixels."]},
        ) from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        raise unsupported(
            "Not a supported image or video (JPEG, PNG, WebP, GIF, MP4, MOV, WebM)."
        ) from None
    finally:
        fh.seek(0)
    if fmt == "GIF":
        kind = "gif" if frames > 1 else "image"
        return Probe(kind=kind, mime_type="image/gif", width=width, height=height)
    if fmt not in IMAGE_FORMATS:
        raise unsupported(f"{fmt} images are not supported; use JPEG, PNG, WebP or GIF.")
    return Probe(kind="image", mime_type=IMAGE_FORMATS[fmt], width=width, height=height)


def _boxes(fh: BinaryIO, start: int, end: int | None):
    """(type, payload start, payload end) of the boxes between start and end."""
    offset = start
    for _ in range(MAX_BOXES):
        if end is not None and offset + 8 > end:
            return
        fh.seek(offset)
        header = fh.read(8)
        if len(header) < 8:
            return
        size, box_type = struct.unpack(">I4s", header)
        header_len = 8
        if size == 1:
            large = fh.read(8)
            if len(large) < 8:
                return
            size = struct.unpack(">Q", large)[0]
            header_len = 16
        elif size == 0:  # extends to the end of the file
            fh.seek(0, 2)
            size = fh.tell() - offset
        if size < header_len:
            return
        yield box_type, offset + header_len, offset + size
        offset += size


def _probe_iso_media(fh: BinaryIO, *, brand: bytes) -> Probe:
    mime = "video/quicktime" if brand == b"qt  " else "video/mp4"
    duration = width = height = None
    try:
        for box_type, start, end in _boxes(fh, 0, None):
            if box_type != b"moov":
                continue
            for inner, istart, iend in _boxes(fh, start, end):
                if inner == b"mvhd":
                    duration = _read_mvhd(fh, istart)
                elif inner == b"trak" and width is None:
                    for leaf, lstart, _lend in _boxes(fh, istart, iend):
                        if leaf == b"tkhd":
                            w, h = _read_tkhd(fh, lstart)
                            if w and h:
                                width, height = w, h
            break
    except (struct.error, OSError):
        pass  # a truncated header only costs us the metadata
    finally:
        fh.seek(0)
    return Probe(kind="video", mime_type=mime, width=width, height=height, duration_s=duration)


def _read_mvhd(fh: BinaryIO, start: int) -> float | None:
    fh.seek(start)
    version = fh.read(4)[0]
    if version == 1:
        fh.read(16)  # creation and modification times
        timescale, length = struct.unpack(">IQ", fh.read(12))
    else:
        fh.read(8)
        timescale, length = struct.unpack(">II", fh.read(8))
    if not timescale:
        return None
    return round(length / timescale, 3)


def _read_tkhd(fh: BinaryIO, start: int) -> tuple[int, int]:
    fh.seek(start)
    version = fh.read(4)[0]
    # times, track id, reserved, duration: 32 bytes (version 1) or 20 (version 0); then
    # reserved (8), layer, alternate group, volume, reserved (8), matrix (36).
    fh.seek(start + 4 + (32 if version == 1 else 20) + 8 + 8 + 36)
    width, height = struct.unpack(">II", fh.read(8))
    return width >> 16, height >> 16  # 16.16 fixed point

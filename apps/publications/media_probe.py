"""What an uploaded file really is, read from its bytes (never its name or the client's
Content-Type): kind, MIME type, and dimensions or duration where they are cheap to read.

Images go through Pillow, which reads only the header to know the size; more pixels than
MAX_IMAGE_PIXELS (a decompression bomb: a small file that decodes to gigabytes) is refused.
MP4 and QuickTime files are walked box by box to the movie header (duration) and the first
visual track header (dimensions) without decoding anything; a file that ends before its
boxes do (a truncated upload) or has no movie header is refused, since no platform can play
it. WebM is recognized by its signature; its duration is not read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import IO

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
# The largest image any supported platform takes (X: 8192 x 8192). Pillow's own bomb check
# (an error past twice this, a warning past it) guards any decoding done later.
MAX_IMAGE_PIXELS = 8192 * 8192
Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS


@dataclass(frozen=True)
class Probe:
    kind: str  # image, video, gif
    mime_type: str
    width: int | None = None
    height: int | None = None
    duration_s: float | None = None


def unsupported(message: str) -> ValidationFailed:
    return ValidationFailed(message, code="MEDIA_TYPE_UNSUPPORTED", details={"file": [message]})


def probe(fh: IO[bytes]) -> Probe:
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


def too_many_pixels() -> ValidationFailed:
    limit = f"{MAX_IMAGE_PIXELS:,} pixels (8192 x 8192)"
    message = f"The image has too many pixels; at most {limit} are accepted."
    return ValidationFailed(message, code="MEDIA_TOO_LARGE", details={"file": [message]})


def _probe_image(fh: IO[bytes]) -> Probe:
    try:
        with Image.open(fh) as image:
            fmt = image.format
            width, height = image.size
            if width * height > MAX_IMAGE_PIXELS:
                raise too_many_pixels()  # before n_frames, which walks every frame
            frames = getattr(image, "n_frames", 1)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise too_many_pixels() from None
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


def _boxes(fh: IO[bytes], start: int, end: int | None):
    """(type, payload start, payload end) of the boxes between start and end."""
    offset = start
    for _ in range(MAX_BOXES):
        if end is not None and offset + 8 > end:
            return
        fh.seek(offset)
        header = fh.read(8)
        if len(header) < 8:
            if header:  # the file ends inside a box header
                raise incomplete_video()
            return
        size, box_type = struct.unpack(">I4s", header)
        header_len = 8
        if size == 1:
            large = fh.read(8)
            if len(large) < 8:
                raise incomplete_video()
            size = struct.unpack(">Q", large)[0]
            header_len = 16
        elif size == 0:  # extends to the end of the file
            fh.seek(0, 2)
            size = fh.tell() - offset
        if size < header_len:
            return
        yield box_type, offset + header_len, offset + size
        offset += size


def incomplete_video() -> ValidationFailed:
    return unsupported(
        "The video file is incomplete or damaged (it ends before its last part, or has no "
        "movie header): upload the whole file again."
    )


def _probe_iso_media(fh: IO[bytes], *, brand: bytes) -> Probe:
    mime = "video/quicktime" if brand == b"qt  " else "video/mp4"
    fh.seek(0, 2)
    file_size = fh.tell()
    duration = width = height = None
    found_movie = False
    try:
        for box_type, start, end in _boxes(fh, 0, None):
            if end > file_size:
                raise incomplete_video()
            if box_type != b"moov":
                continue
            found_movie = True
            for inner, istart, iend in _boxes(fh, start, end):
                if iend > end:
                    raise incomplete_video()
                if inner == b"mvhd":
                    duration = _read_mvhd(fh, istart)
                elif inner == b"trak" and width is None:
                    for leaf, lstart, _lend in _boxes(fh, istart, iend):
                        if leaf == b"tkhd":
                            w, h = _read_tkhd(fh, lstart)
                            if w and h:
                                width, height = w, h
    except (struct.error, IndexError, OSError):
        raise incomplete_video() from None
    finally:
        fh.seek(0)
    if not found_movie:
        raise incomplete_video()
    return Probe(kind="video", mime_type=mime, width=width, height=height, duration_s=duration)


def _read_mvhd(fh: IO[bytes], start: int) -> float | None:
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


def _read_tkhd(fh: IO[bytes], start: int) -> tuple[int, int]:
    fh.seek(start)
    version = fh.read(4)[0]
    # times, track id, reserved, duration: 32 bytes (version 1) or 20 (version 0); then
    # reserved (8), layer, alternate group, volume, reserved (8), matrix (36).
    fh.seek(start + 4 + (32 if version == 1 else 20) + 8 + 8 + 36)
    width, height = struct.unpack(">II", fh.read(8))
    return width >> 16, height >> 16  # 16.16 fixed point

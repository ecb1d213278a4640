"""Sizes a transcript does not show: images (from their header bytes) and blocks whose text
is absent (empty thinking, an image without data), inferred from the billed growth
between consecutive requests of one conversation."""

from __future__ import annotations

import base64
import binascii
import math
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# Anthropic's vision docs: tokens ≈ width × height / 750, after scaling the image to at
# most 1,568 px on the long edge and about 1.15 megapixels.
_LONG_EDGE = 1568
_MAX_PIXELS = 1_150_000
_PIXELS_PER_TOKEN = 750


@dataclass(eq=False)
class Hidden:
    """The size of a block the transcript does not show; ``tokens`` is set once inferred."""

    tokens: int = 0
    how: str = "inferred from billed growth"
    sized: bool = False  # its size is set before the growth is read (header, usage)
    inferred: bool = True  # the size is an estimate, not read from the file itself


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, WebP or JPEG header; ``None`` if unreadable."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        w, h = struct.unpack(">II", data[16:24])
        return int(w), int(h)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        w, h = struct.unpack("<HH", data[6:10])
        return int(w), int(h)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and data[12:16] == b"VP8X" and len(data) >= 30:
        w = 1 + int.from_bytes(data[24:27], "little")
        h = 1 + int.from_bytes(data[27:30], "little")
        return w, h
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):  # start of frame: height, then width
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(w), int(h)
        i += 2 + length
    return None


def anthropic_image_tokens(width: int, height: int) -> int:
    scale = min(1.0, _LONG_EDGE / max(width, height, 1))
    w, h = width * scale, height * scale
    if w * h > _MAX_PIXELS:
        shrink = math.sqrt(_MAX_PIXELS / (w * h))
        w, h = w * shrink, h * shrink
    return max(1, math.ceil(w * h / _PIXELS_PER_TOKEN))


def image_hidden(part: Mapping[str, Any]) -> Hidden:
    """An ``image`` content block's size: from its header bytes when the data is there,
    else left to be inferred from the billed growth."""
    source = part.get("source")
    data = source.get("data") if isinstance(source, Mapping) else None
    if isinstance(data, str):
        try:
            raw = base64.b64decode(data[:4096] + "=" * (-len(data[:4096]) % 4), validate=False)
        except (binascii.Error, ValueError):
            raw = b""
        size = image_size(raw)
        if size is not None:
            tokens = anthropic_image_tokens(*size)
            how = f"{size[0]}×{size[1]} px image, width × height / 750"
            return Hidden(tokens, how, sized=True, inferred=False)
    return Hidden()


def nested_hidden(content: Any, count: Callable[[str], int]) -> Hidden | None:
    """A tool result's size when it holds images or documents (a Read of a screenshot or a
    PDF): its text counted plus each image from its header; inferred from the billed
    growth when an image has no data or a document is there. ``None``: plain text."""
    if not isinstance(content, list):
        return None
    parts = [p for p in content if isinstance(p, Mapping)]
    media = [p for p in parts if p.get("type") in ("image", "document")]
    if not media:
        return None
    sizes = [image_hidden(p) if p.get("type") == "image" else Hidden() for p in media]
    if not all(h.sized for h in sizes):
        return Hidden()
    text = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str))
    how = "; ".join(h.how for h in sizes) + (", plus its text" if text else "")
    tokens = sum(h.tokens for h in sizes) + (count(text) if text else 0)
    return Hidden(tokens, how, sized=True, inferred=False)

"""GlyphAtlas: one font size's glyphs rasterised once into an ``r8unorm`` texture.

Glyphs are rendered by FreeType (freetype-py) at the physical pixel size
``font_size * pixel_ratio`` with light hinting and 8-bit coverage
antialiasing, and packed into shelves of one texture. Text is drawn
axis-aligned at whole physical pixels, so the shader copies each glyph's
coverage 1:1 (``textureLoad``, no sampler): what reaches the screen is
exactly FreeType's rasterisation.

Why coverage and not a signed-distance atlas (as pygfx uses): measured on
the 94 printable ASCII glyphs of DejaVu Sans against an ideal coverage
(the outline rendered 16x larger, box-filtered down), the mean absolute
error over ink pixels is 0.008 / 0.009 / 0.006 at 9 / 12 / 24 px for
FreeType's unhinted coverage and 0.042 / 0.043 / 0.024 for a distance field
sampled exactly (not even quantised into an atlas) with a one-pixel ramp:
four to five times further off, softening stems and corners at the sizes
tick labels use (tests/render/test_text.py measures 12 px). What SDF buys, free scaling and rotation, labels drawn
axis-aligned at whole pixels do not need; one coverage atlas per size and
pixel ratio costs a few tens of kilobytes. Light hinting (vertical only,
as desktop renderers use) then snaps baselines and x-heights to the pixel
grid for contrast, a deliberate departure from the ideal that an SDF
cannot make.

Layout (advances, kerning pairs from the font's ``kern`` table, ellipsis
truncation) is on the CPU, in whole physical pixels, and cached per string.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

import numpy as np
import wgpu

from ..errors import GraphTypeError, GraphValidationError
from ..graph.compat import device_cache

__all__ = ["GlyphAtlas", "glyph_atlas", "DEFAULT_FONT", "ATLAS_CHARACTERS", "ELLIPSIS"]

#: The font shipped with gpuviz: DejaVu Sans 2.37 (Bitstream Vera license,
#: ``fonts/LICENSE.txt`` beside it).
DEFAULT_FONT = Path(__file__).resolve().parent / "fonts" / "DejaVuSans.ttf"
ELLIPSIS = "\u2026"
#: Printable ASCII and Latin-1 (accented column names: ``café``, ``Über``;
#: micro ``µ``, ``×``, ``°``, ``±``, ``·``, no-break space) plus Greek mu,
#: minus sign, ellipsis, thin space and en dash.
ATLAS_CHARACTERS = ("".join(chr(c) for c in range(0x20, 0x7F)) + "".join(chr(c) for c in range(0xA0, 0x100))
                    + "\u03bc\u2212\u2026\u2009\u2013")
_FALLBACK = "?"
_ATLAS_WIDTH = 256  # texels; grows to 512/1024 for large sizes
_LAYOUT_CACHE_SIZE = 4096  # strings per atlas


@lru_cache(maxsize=32)
def _rasterise(font: str, size_64: int, characters: str):
    """FreeType's bitmaps and metrics of ``characters`` at ``size_64 / 64``
    physical pixels per em, packed into one coverage image (process-wide
    cache: the same size on two devices rasterises once)."""
    import freetype  # noqa: PLC0415 - only text needs it, and only once per size

    face = freetype.Face(font)
    face.set_char_size(size_64)
    flags = freetype.FT_LOAD_RENDER | freetype.FT_LOAD_TARGET_LIGHT
    n = len(characters)
    advance, left, top, width, height = (np.zeros(n, np.int32) for _ in range(5))
    bitmaps = []
    for i, char in enumerate(characters):
        face.load_char(char, flags)
        slot = face.glyph
        bitmap = slot.bitmap
        rows, cols = bitmap.rows, bitmap.width
        image = np.zeros((rows, cols), np.uint8)
        if rows and cols:
            buffer = np.frombuffer(bytes(bitmap.buffer), np.uint8).reshape(rows, bitmap.pitch)
            image[:] = buffer[:, :cols]
        bitmaps.append(image)
        advance[i] = round(slot.advance.x / 64)
        left[i], top[i], width[i], height[i] = slot.bitmap_left, slot.bitmap_top, cols, rows
    kerning = np.zeros((n, n), np.int16)
    if face.has_kerning:
        for i, a in enumerate(characters):
            for j, b in enumerate(characters):
                k = face.get_kerning(a, b).x  # by character; grid-fitted (FT_KERNING_DEFAULT), 26.6
                if k:
                    kerning[i, j] = round(k / 64)
    # Shelf packing, tallest first, one texel of padding.
    atlas_width = _ATLAS_WIDTH
    while atlas_width < 4 * (int(width.max()) + 1) and atlas_width < 4096:
        atlas_width *= 2
    u, v = np.zeros(n, np.int32), np.zeros(n, np.int32)
    x = y = shelf = 0
    for i in sorted(range(n), key=lambda i: -height[i]):
        if x + width[i] + 1 > atlas_width:
            x, y, shelf = 0, y + shelf + 1, 0
        u[i], v[i] = x, y
        x += width[i] + 1
        shelf = max(shelf, height[i])
    atlas_height = max(4, -(-(y + shelf + 1) // 4) * 4)
    image = np.zeros((atlas_height, atlas_width), np.uint8)
    for i, bitmap in enumerate(bitmaps):
        image[v[i]:v[i] + height[i], u[i]:u[i] + width[i]] = bitmap
    metrics = {"advance": advance, "left": left, "top": top, "width": width, "height": height, "u": u, "v": v}
    for array in metrics.values():
        array.setflags(write=False)
    kerning.setflags(write=False)
    image.setflags(write=False)
    ascender, descender = round(face.size.ascender / 64), round(face.size.descender / 64)
    return image, metrics, kerning, ascender, descender


class GlyphAtlas:
    """One font size's glyphs in a GPU texture, with their metrics and kerning.

    Build it once per device and size (:func:`glyph_atlas` caches it) and
    share it between :class:`~gpuviz.render.TextLayer` objects.

    Parameters
    ----------
    device : wgpu.GPUDevice
    font_size : float
        Em size in logical (CSS) pixels.
    pixel_ratio : float
        Physical pixels per logical pixel of the canvas the text is drawn
        into. Glyphs are rasterised at ``font_size * pixel_ratio`` physical
        pixels, so they stay crisp on high-DPI screens.
    characters : str, optional
        The characters to rasterise; defaults to :data:`ATLAS_CHARACTERS`
        (printable ASCII and Latin-1, SI prefixes incl. ``µ``, ``×``, ``−``,
        ``…``, ``°``). Other characters are laid out as ``?``.
    font : str or path, optional
        A TrueType/OpenType file; defaults to the shipped DejaVu Sans.

    Attributes
    ----------
    texture : wgpu.GPUTexture
        ``r8unorm`` coverage (TEXTURE_BINDING | COPY_DST), written once at
        construction through ``device.queue.write_texture``.
    image : numpy.ndarray
        The same coverage, ``(height, width)`` uint8 (read-only).
    font_size, pixel_ratio : float
    size_px : float
        ``font_size * pixel_ratio``: the em size in physical pixels.
    ascender, descender, line_height : int
        Physical pixels above the baseline (positive), below it (negative),
        and their distance: the line box every layout uses.
    characters : str

    Raises
    ------
    GraphValidationError
        A non-positive or non-finite size or ratio, an em size outside
        1..512 physical pixels, or a font file that does not exist.
    GraphTypeError
        ``characters`` or ``font`` of the wrong type.

    Notes
    -----
    Does not submit, record commands or read back; text is single-line and
    laid out left to right without shaping (no ligatures, no complex
    scripts, no font fallback). Positions are whole physical pixels.
    """

    def __init__(self, device, *, font_size: float = 12.0, pixel_ratio: float = 1.0,
                 characters: str | None = None, font=None):
        for name, value in (("font_size", font_size), ("pixel_ratio", pixel_ratio)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise GraphTypeError(f'GlyphAtlas "{name}" must be a number (got {type(value).__name__})')
            if not np.isfinite(value) or value <= 0:
                raise GraphValidationError(f'GlyphAtlas "{name}" must be positive and finite (got {value})')
        size_64 = round(float(font_size) * float(pixel_ratio) * 64)
        if not 64 <= size_64 <= 512 * 64:
            raise GraphValidationError(f"GlyphAtlas em size must be 1..512 physical pixels "
                                       f"(got font_size {font_size} x pixel_ratio {pixel_ratio})")
        characters = ATLAS_CHARACTERS if characters is None else characters
        if not isinstance(characters, str):
            raise GraphTypeError(f'GlyphAtlas "characters" must be a str (got {type(characters).__name__})')
        # The fallback and the ellipsis are always present, each character once.
        characters = "".join(dict.fromkeys(characters + _FALLBACK + ELLIPSIS))
        if font is not None and not isinstance(font, (str, Path)):
            raise GraphTypeError(f'GlyphAtlas "font" must be a path (got {type(font).__name__})')
        font = Path(DEFAULT_FONT if font is None else font)
        if not font.is_file():
            raise GraphValidationError(f'GlyphAtlas font "{font}" does not exist')
        image, metrics, kerning, self.ascender, self.descender = _rasterise(str(font), size_64, characters)
        self.device = device
        self.font_size, self.pixel_ratio = float(font_size), float(pixel_ratio)
        self.size_px = size_64 / 64
        self.characters = characters
        self.line_height = self.ascender - self.descender
        self.image, self.kerning = image, kerning
        self._metrics = metrics
        self._slot = {c: i for i, c in enumerate(characters)}
        self._fallback = self._slot[_FALLBACK]
        self._layouts: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        height, width = image.shape
        self.texture = device.create_texture(
            label=f"glyph-atlas-{self.size_px:g}px", size=(width, height, 1), format="r8unorm",
            usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST)
        device.queue.write_texture({"texture": self.texture}, image.tobytes(),
                                   {"bytes_per_row": width, "rows_per_image": height}, (width, height, 1))

    def metrics(self, name: str) -> np.ndarray:
        """Per-glyph metric ``name`` (physical pixels, read-only), indexed by
        the slots :meth:`layout` returns: ``advance``, ``left`` (bearing from
        the pen to the bitmap), ``top`` (baseline to the bitmap's top row),
        ``width``, ``height`` (bitmap size) and ``u``, ``v`` (its texel origin)."""
        return self._metrics[name]

    def layout(self, text: str):
        """``(slots, pen_x, width)`` of one line of ``text``: each character's
        glyph slot, its pen position from the line's start (kerning
        included) and the line's advance width, in physical pixels. Cached
        per string (the most recent few thousand strings and truncations)."""
        cached = self._cached(text)
        if cached is not None:
            return cached
        slot, fallback = self._slot, self._fallback
        slots = np.fromiter((slot.get(c, fallback) for c in text), np.int32, len(text))
        advance = self._metrics["advance"][slots]
        if len(slots) > 1:
            advance[:-1] += self.kerning[slots[:-1], slots[1:]]
        pen = np.zeros(len(slots), np.int32)
        np.cumsum(advance[:-1], out=pen[1:])
        width = int(pen[-1] + self._metrics["advance"][slots[-1]]) if len(slots) else 0
        slots.setflags(write=False)
        pen.setflags(write=False)
        return self._store(text, (slots, pen, width))

    def _cached(self, key):
        with self._lock:
            value = self._layouts.get(key)
            if value is not None:
                self._layouts.move_to_end(key)
            return value

    def _store(self, key, value):
        with self._lock:
            self._layouts[key] = value
            while len(self._layouts) > _LAYOUT_CACHE_SIZE:
                self._layouts.popitem(last=False)
        return value

    def truncate(self, text: str, *, max_width: int) -> str:
        """``text`` if its advance width fits in ``max_width`` physical
        pixels, else its longest prefix (trailing spaces dropped) followed by
        ``…`` that fits, or ``""`` when not even ``…`` fits. Cached like
        :meth:`layout`."""
        slots, pen, width = self.layout(text)
        if width <= max_width:
            return text
        cached = self._cached((text, max_width))
        if cached is not None:
            return cached
        ell = self._slot[ELLIPSIS]
        advance = self._metrics["advance"]
        # Width of text[:k] + "…" for k = 1..n-1: the pen after character k-1
        # (without its kerning towards character k), its kerning towards "…",
        # and the advance of "…". Prefixes ending in a space are skipped
        # (their stripped form is a shorter prefix).
        last = slots[:-1]
        widths = pen[:-1] + advance[last] + self.kerning[last, ell] + advance[ell]
        fits = (widths <= max_width) & np.array([c != " " for c in text[:-1]], bool)
        if fits.any():
            result = text[:int(np.nonzero(fits)[0][-1]) + 1] + ELLIPSIS
        else:
            result = ELLIPSIS if advance[ell] <= max_width else ""
        return self._store((text, max_width), result)

    def __repr__(self):
        return (f"GlyphAtlas({self.font_size:g} px x {self.pixel_ratio:g}, {len(self.characters)} glyphs, "
                f"{self.image.shape[1]}x{self.image.shape[0]} texels)")


def glyph_atlas(device, *, font_size: float = 12.0, pixel_ratio: float = 1.0) -> GlyphAtlas:
    """The :class:`GlyphAtlas` of the shipped font at ``font_size`` x
    ``pixel_ratio`` on ``device``, built on first use and cached for the
    device's lifetime (:func:`gpuviz.graph.compat.device_cache`).

    Raises what :class:`GlyphAtlas` raises. Does not submit or read back.
    """
    cache = device_cache(device, "glyph-atlases")
    try:
        key = (float(font_size), float(pixel_ratio))
    except (TypeError, ValueError):
        key = None  # GlyphAtlas names the bad argument
    atlas = cache.get(key)
    if atlas is None:
        atlas = cache[key] = GlyphAtlas(device, font_size=font_size, pixel_ratio=pixel_ratio)
    return atlas

"""gpuviz.render: GPU-driven drawing helpers.

:class:`DrawCommandBuffer` holds stable indirect draw records whose instance
counts GPU work rewrites. :class:`TextLayer` draws many labels from a
:class:`GlyphAtlas` in one instanced draw. :func:`nice_ticks`,
:func:`log_ticks`, :func:`time_ticks` and :func:`category_ticks` place axis
ticks and label them through :func:`format_numbers` / :func:`format_durations`
(pure Python and numpy). :class:`Axis` / :class:`AxisLayout`,
:func:`colour_bar_layout`, :class:`RectLayer` and :class:`PlotOverlay` draw
axes, colour bars, legends and tooltips over any plot;
:class:`GPUColourRange` picks a colour range on the GPU in the frame that
uses it; :class:`GPUIndexPickingTarget` renders object IDs for picking;
:mod:`.raster` holds the formats of compute rasterisation (depth + ID
splats that consumers write by compute, ``shaders/raster.wgsl``).
Nothing here submits work or reads back.
"""

from .axes import Axis, AxisLayout
from .colour_bar import ColourBarLayout, colour_bar_layout, ramp_colours
from .colour_range import COLOUR_NORMALISATIONS, GPUColourRange
from .draw_commands import DRAW_RECORD_FIELDS, DrawCommandBuffer
from .glyph_atlas import ATLAS_CHARACTERS, ELLIPSIS, GlyphAtlas, glyph_atlas
from .overlay import PlotOverlay
from .picking import NO_ID, GPUIndexPickingTarget, PickingHandles
from .raster import RASTER_EMPTY, RASTER_FAR, packed_id_limit, packed_words, unpack_words
from .shapes import RectLayer
from .number_format import format_duration, format_durations, format_number, format_numbers
from .text import TextLayer
from .ticks import Ticks, category_ticks, log_ticks, nice_ticks, time_ticks

__all__ = ["DrawCommandBuffer", "DRAW_RECORD_FIELDS", "GlyphAtlas", "glyph_atlas", "TextLayer", "ATLAS_CHARACTERS",
           "ELLIPSIS", "Ticks", "nice_ticks", "log_ticks", "time_ticks", "category_ticks",
           "format_number", "format_numbers", "format_duration", "format_durations",
           "RectLayer", "Axis", "AxisLayout", "ColourBarLayout", "colour_bar_layout", "ramp_colours", "PlotOverlay",
           "GPUColourRange", "COLOUR_NORMALISATIONS", "GPUIndexPickingTarget", "PickingHandles",
           "NO_ID", "RASTER_EMPTY", "RASTER_FAR", "packed_id_limit", "packed_words", "unpack_words"]

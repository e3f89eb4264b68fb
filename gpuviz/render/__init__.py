"""gpuviz.render: GPU-driven drawing helpers.

:class:`DrawCommandBuffer` holds stable indirect draw records whose instance
counts GPU work rewrites. :class:`TextLayer` draws many labels from a
:class:`GlyphAtlas` in one instanced draw. Nothing here submits work or
reads back.
"""

from .draw_commands import DRAW_RECORD_FIELDS, DrawCommandBuffer
from .glyph_atlas import ATLAS_CHARACTERS, ELLIPSIS, GlyphAtlas, glyph_atlas
from .text import TextLayer

__all__ = ["DrawCommandBuffer", "DRAW_RECORD_FIELDS", "GlyphAtlas", "glyph_atlas", "TextLayer", "ATLAS_CHARACTERS", "ELLIPSIS"]

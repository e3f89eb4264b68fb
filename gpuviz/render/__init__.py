"""gpuviz.render: GPU-driven drawing helpers.

:class:`DrawCommandBuffer` holds stable indirect draw records whose instance
counts GPU work rewrites. Nothing here submits work or reads back.
"""

from .draw_commands import DRAW_RECORD_FIELDS, DrawCommandBuffer

__all__ = ["DrawCommandBuffer", "DRAW_RECORD_FIELDS"]

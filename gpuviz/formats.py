"""GPUVectorFormat: the byte layout of one stored row.

A leaf module shared by the graph (view sizes) and the tables (numpy/Arrow
mapping), so that the graph never imports the tables layer. A format names
stored bytes, not a WGSL value type: ``unorm8x4`` occupies four bytes though
a vertex shader sees ``vec4<f32>``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import GraphValidationError

__all__ = ["GPUVectorFormat", "vector_format", "span_byte_length"]


@dataclass(frozen=True, kw_only=True)
class GPUVectorFormat:
    """One fixed-width row format.

    Describes stored bytes only: does not say how a shader reads them (a
    ``unorm8x4`` row is four bytes, read as ``vec4<f32>``) and holds no data.

    Attributes
    ----------
    name : str
        WebGPU-style name, e.g. ``"uint32"`` or ``"float32x2"``.
    scalar : str
        numpy dtype name of one component (``"uint32"``, ``"float16"``...).
    components : int
        Components per row (1 to 4).
    normalized : bool
        True for ``unorm``/``snorm`` formats read as floats by shaders.
    """

    name: str
    scalar: str
    components: int
    normalized: bool = False

    @property
    def byte_size(self) -> int:
        """Bytes of one packed row."""
        return np.dtype(self.scalar).itemsize * self.components

    @property
    def dtype(self) -> np.dtype:
        """numpy dtype of one component."""
        return np.dtype(self.scalar)

    def __str__(self) -> str:
        return self.name

    @classmethod
    def get(cls, value: "GPUVectorFormat | str") -> "GPUVectorFormat":
        """Look a format up by name (or pass one through).

        Raises :class:`~gpuviz.GraphValidationError` (a ``ValueError``) for an
        unknown name; never guesses a near match.
        """
        return vector_format(value)

    @classmethod
    def from_numpy(cls, dtype, *, components: int = 1) -> "GPUVectorFormat":
        """The format storing ``components`` values of ``dtype`` per row.

        Never picks a normalized format. Raises
        :class:`~gpuviz.GraphValidationError` (a ``ValueError``) when no
        format stores that dtype and component count.
        """
        dt = np.dtype(dtype)
        for fmt in _FORMATS.values():
            if fmt.dtype == dt and fmt.components == components and not fmt.normalized:
                return fmt
        raise GraphValidationError(
            f"GPUVectorFormat has no format for dtype {dt.name} with {components} components "
            f"(supported: {', '.join(sorted(_FORMATS))})"
        )


def _build() -> dict:
    table = {}
    scalars = {
        "uint8": "uint8", "sint8": "int8", "uint16": "uint16", "sint16": "int16",
        "uint32": "uint32", "sint32": "int32", "float16": "float16", "float32": "float32",
    }
    for name, scalar in scalars.items():
        for n in (1, 2, 3, 4):
            # WebGPU has no 3-component 8/16-bit formats; keep the set honest.
            if n == 3 and np.dtype(scalar).itemsize < 4:
                continue
            fmt_name = name if n == 1 else f"{name}x{n}"
            table[fmt_name] = GPUVectorFormat(name=fmt_name, scalar=scalar, components=n)
    for name, scalar in (("unorm8", "uint8"), ("snorm8", "int8"), ("unorm16", "uint16"), ("snorm16", "int16")):
        for n in (2, 4):
            table[f"{name}x{n}"] = GPUVectorFormat(name=f"{name}x{n}", scalar=scalar, components=n, normalized=True)
    return table


_FORMATS = _build()


def vector_format(value: "GPUVectorFormat | str") -> GPUVectorFormat:
    """Resolve a format name or object to a :class:`GPUVectorFormat`.

    Raises :class:`~gpuviz.GraphValidationError` (a ``ValueError``) for an
    unknown name. Names are WebGPU-style (``"sint32"``, not ``"int32"``);
    does not map numpy dtypes (see :meth:`GPUVectorFormat.from_numpy`).
    """
    if isinstance(value, GPUVectorFormat):
        return value
    try:
        return _FORMATS[str(value)]
    except KeyError:
        raise GraphValidationError(
            f'GPUVectorFormat "{value}" is unknown (supported: {", ".join(sorted(_FORMATS))})'
        ) from None


def span_byte_length(length: int, byte_stride: int, row_byte_length: int) -> int:
    """Bytes from the first row's start to the last row's end of ``length``
    strided rows (0 when empty): the extent a typed range occupies."""
    return 0 if length == 0 else (length - 1) * byte_stride + row_byte_length

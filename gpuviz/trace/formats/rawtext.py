"""Exact JSON text (``msgspec.Raw`` values) -> Arrow / numpy columns.

Shared by the block decoders of :mod:`gpuviz.trace.formats.jsonevents`
(the reference) and :mod:`gpuviz.trace.formats.fastblock`: numbers are
converted from their decimal text by Arrow's string -> decimal cast, never
through a float. Does not parse JSON documents.
"""

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["raw_to_binary", "utf8", "raw_text", "raw_to_ns", "raws_to_ns", "raws_to_text", "id_text", "id_values", "args_text"]


def raw_to_binary(raws):
    """list of Raw/bytes -> LargeBinaryArray (length 0 = missing), one copy."""
    n = len(raws)
    if n == 0:
        return pa.array([], pa.large_binary())
    return _binary(b"".join(raws), np.fromiter(map(len, raws), np.int64, n))


def _binary(joined, lengths):
    offsets = np.empty(len(lengths) + 1, np.int64)
    offsets[0] = 0
    np.cumsum(lengths, out=offsets[1:])
    return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(lengths),
                                            [None, pa.py_buffer(offsets), pa.py_buffer(joined)])


def raws_to_ns(raws):
    """list of Raw -> (int64 ns, ok, present): what :func:`raw_to_ns` gives
    for :func:`raw_to_binary` of them, plus ``present`` (non-empty text).

    Blocks whose values all have one layout (digits with the same number
    of decimals, 1-3, or none; missing values allowed: Kineto's and most
    writers' ts and dur) are converted by a few numpy passes over the joined
    text instead of Arrow's decimal cast, which is slower; anything else
    goes through raw_to_ns."""
    n = len(raws)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0, bool)
    lengths = np.fromiter(map(len, raws), np.int64, n)
    joined = b"".join(raws)
    ns = _aligned_ns(joined, lengths)
    present = lengths > 0
    if ns is not None:
        return ns, present.copy(), present
    ns, ok = raw_to_ns(_binary(joined, lengths))
    return ns, ok, present


def _aligned_ns(joined, lengths):
    """int64 ns of unsigned decimals with one number of decimals (see
    :func:`raws_to_ns`), exact; missing values give 0; None for any other
    text. The values are right-aligned in one byte matrix padded with
    '0' (which changes no value), so the decimal point is one column."""
    n, width = len(lengths), int(lengths.max())
    if not 1 <= width <= 19:
        return None
    buf = np.frombuffer(joined, np.uint8)
    if (lengths == width).all():
        text = buf.reshape(n, width)
    else:
        text = np.full((n, width), 48, np.uint8)
        # byte k of value i goes to flat position k + (i + 1) * width - (end of value i)
        shift = (np.arange(1, n + 1) * width - np.cumsum(lengths))
        text.reshape(-1)[np.arange(len(buf)) + np.repeat(shift, lengths)] = buf
    longest = text[int(np.argmax(lengths))]
    dots = np.flatnonzero(longest == 46)
    point = int(dots[0]) if len(dots) else width
    decimals = width - point - 1 if len(dots) else 0
    if not 1 <= point <= 15 or (len(dots) and not 1 <= decimals <= 3):
        return None                 # at most 10^18 ns: no overflow; more decimals: the cast truncates them
    digits = text - np.uint8(48)    # bytes below '0' wrap above 9
    if len(dots):
        if not ((text[:, point] == 46) | (lengths == 0)).all():
            return None
        digits[:, point] = 0
    if not (digits <= 9).all():
        return None
    weights = np.zeros(width, np.int64)
    weights[:point] = 10 ** np.arange(point + 2, 2, -1, dtype=np.int64)
    weights[point + 1:] = 10 ** np.arange(2, 2 - decimals, -1, dtype=np.int64)
    return digits.astype(np.int64) @ weights


def utf8(binary):
    """Binary -> large_string; invalid UTF-8 (which Raw fields may hold) is replaced."""
    try:
        return binary.cast(pa.large_string())
    except pa.ArrowInvalid:
        return pa.array([None if b is None else b.decode("utf-8", "replace") for b in binary.to_pylist()],
                        pa.large_string())


def raw_text(binary):
    """Raw JSON scalars -> text without surrounding quotes."""
    return pc.utf8_trim(utf8(binary), characters='"')


def raws_to_text(raws):
    """list of Raw -> string array: ``raw_text(raw_to_binary(raws))`` as
    ``pa.string()``, built straight from the joined bytes when no value is
    a quoted string and all of them are ASCII (bare numbers: Kineto's flow
    ids), where the UTF-8 check and the quote trim change nothing."""
    n = len(raws)
    lengths = np.fromiter(map(len, raws), np.int64, n)
    joined = b"".join(raws)
    if 0 < len(joined) < (1 << 31) - 1:
        text = np.frombuffer(joined, np.uint8)
        offsets = np.zeros(n + 1, np.int32)
        np.cumsum(lengths, out=offsets[1:])
        firsts = offsets[:-1][lengths > 0]
        if not (text[firsts] == 34).any() and not (text >= 128).any():
            return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(joined))
    return raw_text(_binary(joined, lengths) if n else pa.array([], pa.large_binary())).cast(pa.string())


def raw_to_ns(binary):
    """Raw JSON numbers (or numeric strings) in us -> (int64 ns, ok mask).

    Exact for decimal text; sub-ns digits truncate toward zero. Missing,
    non-numeric, non-finite or out-of-int64 values give ok=False.
    """
    n = len(binary)
    lengths = pc.binary_length(binary).to_numpy(zero_copy_only=False)
    present = lengths > 0
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, bool)
    if lengths.max() <= 32 and not _quoted(binary, lengths):
        # Bare JSON numbers: ASCII text as it is (no UTF-8 check, no quotes to trim).
        got = _cast_ns(binary.view(pa.large_string()), n, present)
        if got is not None:
            return got
    text = raw_text(binary)
    if lengths.max() <= 32:
        got = _cast_ns(text, n, present)
        if got is not None:
            return got
    return _slow_ns(text.to_pylist(), present)


def _cast_ns(strings, n, present):
    """(ns, ok) of decimal strings in us by Arrow's decimal cast (missing
    values read as "0"), or None when the cast refuses any of them."""
    try:
        filled = strings if present.all() else pc.if_else(pa.array(present), strings, "0")
        dec = pc.cast(filled, pa.decimal128(38, 3), safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return _decimal_ns(dec, n, present) if dec.null_count == 0 else None


def _quoted(binary, lengths):
    """Does any present value start with a quote (a numeric string)?"""
    offsets = np.frombuffer(binary.buffers()[1], np.int64)[binary.offset: binary.offset + len(binary)]
    values = binary.buffers()[2]
    if values is None:
        return False
    first = np.frombuffer(values, np.uint8)[offsets[lengths > 0]]
    return bool((first == 34).any())


def _decimal_ns(dec, n, present):
    """decimal128(38, 3) array -> (int64 ns, fits int64 and present)."""
    words = np.frombuffer(dec.buffers()[1], np.int64)[2 * dec.offset: 2 * (dec.offset + n)].reshape(-1, 2)
    ns = words[:, 0].copy()
    ok = (words[:, 1] == (ns >> 63)) & present
    return ns, ok


def _slow_ns(texts, present):
    from decimal import ROUND_DOWN, Decimal, InvalidOperation
    n = len(texts)
    ns = np.zeros(n, np.int64)
    ok = np.zeros(n, bool)
    lo, hi = -(1 << 63), (1 << 63) - 1
    for i, t in enumerate(texts):
        if not present[i] or t is None or len(t) > 64:
            continue
        try:
            d = Decimal(t)
        except (InvalidOperation, ValueError):
            continue
        if not d.is_finite() or abs(d.adjusted()) > 30:
            if d.is_finite() and d == 0:
                ok[i] = True
            continue
        v = int((d * 1000).to_integral_value(rounding=ROUND_DOWN))
        if lo <= v <= hi:
            ns[i], ok[i] = v, True
    return ns, ok


def id_text(values):
    """pid/tid values (int or str from _FastEvent, Raw from Event) -> text."""
    if not values:
        return pa.array([], pa.string())
    first = values[0]
    if first.__class__ is int:
        try:
            return pc.cast(pa.array(values, pa.int64()), pa.string())
        except (pa.ArrowException, TypeError, OverflowError, ValueError):
            pass
    if first.__class__ is msgspec.Raw:
        return raw_text(raw_to_binary(values)).cast(pa.string())
    return pa.array([v if v.__class__ is str else str(v) for v in values], pa.string())


def id_values(values):
    """pid/tid values -> int64 array when every one is a Python int that
    fits (the usual case: the text is made once per distinct value later,
    see :func:`ids_as_text`), else :func:`id_text`'s strings."""
    if values and values[0].__class__ is int:
        try:
            return pa.array(values, pa.int64())      # raises for any str: no silent parsing
        except (pa.ArrowException, TypeError, OverflowError, ValueError):
            pass
    return id_text(values)


def ids_as_text(arrays):
    """Block pid/tid arrays (int64 or string) -> one chunked array (not
    copied): int64 when all are, else string (ints as their decimal text,
    as :func:`id_text` writes them)."""
    if arrays and all(pa.types.is_int64(a.type) for a in arrays):
        return pa.chunked_array(arrays, pa.int64())
    return pa.chunked_array([a if pa.types.is_string(a.type) else pc.cast(a, pa.string()) for a in arrays],
                            pa.string())


def args_text(raws):
    """Raw ``args`` -> string array, null for missing and ``{}``, built
    straight from the joined bytes (no extra copies of the JSON text)."""
    n = len(raws)
    if n == 0:
        return pa.array([], pa.string())
    lengths = np.fromiter(map(len, raws), np.int64, n)
    if not lengths.any():
        return pa.nulls(n, pa.string())          # no event of the block has args
    joined = b"".join(raws)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    missing = lengths == 0
    two = np.flatnonzero(lengths == 2)
    if len(two):
        buf = np.frombuffer(joined, np.uint8)
        at = offsets[two]
        missing[two[(buf[at] == 123) & (buf[at + 1] == 125)]] = True
    large = len(joined) >= (1 << 31) - 1
    binary = pa.Array.from_buffers(pa.large_binary() if large else pa.binary(), n,
                                   [pa.py_buffer(np.packbits(~missing, bitorder="little")),
                                    pa.py_buffer(offsets if large else offsets.astype(np.int32)),
                                    pa.py_buffer(joined)], null_count=int(np.count_nonzero(missing)))
    try:
        text = binary.cast(pa.large_string() if large else pa.string())
    except pa.ArrowInvalid:
        text = utf8(binary)
    return text.cast(pa.string())

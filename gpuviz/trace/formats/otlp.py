"""OpenTelemetry OTLP/JSON traces (``resourceSpans`` / ``scopeSpans`` / ``spans``).

The mapping onto the trace model:

* **process**: one per service, the resource attribute ``service.name``
  (``"unknown_service"`` when absent; with ``service.instance.id`` the
  instance is part of the key, ``pid`` = ``"name/instance"``). ``labels`` is
  the JSON text of the resource's attributes (of its first resource).
* **thread**: one per (process, instrumentation scope); ``tid`` is the scope
  name (``""`` for an empty ``scope:{}``), ``name`` the scope name and
  version, or the service name when the scope has no name; kind ``"async"``
  (spans of one scope are concurrent requests, not one call stack).
* **span**: ``name``; ``category`` the span kind in lower case
  (``"server"``, ``"client"``, ``"internal"``, ``"producer"``,
  ``"consumer"``, ``"unspecified"``); exact int64 ns times (strings or JSON
  integers); ``parent`` from ``parentSpanId`` within the same ``traceId``;
  ``args`` the JSON text of trace/span/parent IDs (lower-case hex), kind,
  status, trace state, flags, attributes, dropped counts and events.
* **links**: each span link whose target is in the file becomes a link of
  kind ``"link"`` from the *linked* span (the context the link names, the
  cause) to the span that declares it.
* **instants**: each span event becomes a thread-scope instant (category
  ``"event"``) on its span's thread.

The reader accepts lowerCamelCase and snake_case field names (protobuf's
JSON mapping allows both), the legacy ``instrumentationLibrarySpans`` form,
enums as integers or names (``2`` or ``"SPAN_KIND_SERVER"``), and JSON
Lines (one request per line, as the collector's file exporter writes).

Report reasons. Problems (``strict=True`` raises
:class:`~gpuviz.trace.errors.TraceFormatError` at the first, naming the
file, the span index and the JSON path): ``bad_span`` (not an object, or a
start time missing or unreadable: skipped), ``bad_time`` (an end time
unreadable: kept as incomplete, zero length), ``negative_duration`` (end
before start: kept, zero length), ``float_time`` (a time written as a JSON
float: rounded), ``bad_id`` (a trace/span ID that is not hex of the right
length), ``duplicate_span_id`` (the first span keeps the ID),
``unknown_enum`` (a kind or status code outside the enum: kept in ``args``),
``bad_attribute`` (a malformed attribute or value: skipped), ``bad_event``
and ``bad_link`` (malformed entries: skipped), ``bad_text`` (a lone UTF-16
surrogate escape in a name: replaced by U+FFFD). Notes (counted, never raised:
the file is valid OTLP): ``missing_parent`` (the parent span is not in the
file: ``parent`` is -1, its ID stays in ``args``) and
``missing_link_target``.

Does not read OTLP protobuf (binary) files, does not decode base64
``bytesValue`` attributes (kept as text), and does not recover truncated
JSON (it raises, naming the byte offset).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib

import numpy as np
import pyarrow as pa

from ..errors import TraceFormatError
from ..model import assemble, table

__all__ = ["read_otlp", "parse_otlp", "is_otlp", "SPAN_KINDS", "STATUS_CODES"]

#: OTLP SpanKind values, index = enum number.
SPAN_KINDS = ("unspecified", "internal", "server", "client", "producer", "consumer")
#: OTLP Status.StatusCode values, index = enum number.
STATUS_CODES = ("unset", "ok", "error")

_KIND_PREFIX = "SPAN_KIND_"
_STATUS_PREFIX = "STATUS_CODE_"
_HEX = re.compile(r"\A[0-9a-fA-F]*\Z")
_INT64_MAX = 2**63 - 1
_MAX_VALUE_DEPTH = 64  # nested arrayValue/kvlistValue levels converted into args
_NOTES = frozenset({"missing_parent", "missing_link_target"})
_SURROGATE = re.compile("[\ud800-\udfff]")


def is_otlp(head: bytes) -> bool:
    """Whether the first bytes of a (decompressed) file look like OTLP/JSON:
    a JSON object naming ``resourceSpans`` (or ``resource_spans``) early on.

    A cheap sniff for format detection; it parses nothing.
    """
    text = head[3:] if head.startswith(b"\xef\xbb\xbf") else head  # a UTF-8 byte order mark
    text = text.lstrip()
    return text[:1] == b"{" and (b'"resourceSpans"' in text or b'"resource_spans"' in text)


def read_otlp(path, *, strict=False, partition=0):
    """Read an OTLP/JSON trace file (``.json``, ``.jsonl`` or gzip of either).

    Parameters
    ----------
    path : str or os.PathLike
    strict : bool
        Raise :class:`~gpuviz.trace.errors.TraceFormatError` at the first
        problem (see the module docstring) instead of repairing, skipping and
        counting it in ``trace.report``.
    partition : int
        The partition number of every process (a merge of several files
        numbers them; the trace's ``sources`` holds only ``path``).

    Returns
    -------
    Trace
        One partition whose source is ``path``.

    Raises
    ------
    TraceFormatError
        In both modes for a file that is not OTLP/JSON: empty, not JSON (the
        byte offset is named), binary, or JSON without ``resourceSpans``.

    Notes
    -----
    Loads the whole file into memory and walks it in Python (OTLP/JSON
    exports are request-sized); does not stream, and does not read the
    protobuf encoding.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise TraceFormatError(path, f"cannot read the file ({exc.strerror or exc})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, ValueError, zlib.error) as exc:
            raise TraceFormatError(path, f"broken gzip stream ({exc})") from None
    return parse_otlp(data, path=path, strict=strict, partition=partition)


def parse_otlp(data, *, path="<otlp>", strict=False, partition=0):
    """Parse OTLP/JSON given as bytes, text or an already decoded object.

    Same mapping, report and errors as :func:`read_otlp`; ``path`` names the
    source in errors and in ``trace.sources``. Never reads files.
    """
    requests = _requests(data, path) if isinstance(data, (bytes, bytearray, str)) else [data]
    builder = _Builder(path, strict, partition)
    for r, request in enumerate(requests):
        builder.request(request, f"request {r}" if len(requests) > 1 else "")
    return builder.finish()


def _requests(data, path):
    """The decoded JSON request objects of a document or of JSON Lines."""
    if isinstance(data, (bytes, bytearray)):
        if not data.strip():
            raise TraceFormatError(path, "empty file", offset=0)
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise TraceFormatError(path, "not UTF-8 text (binary file?)", offset=exc.start) from None
    else:
        text = data
        if not text.strip():
            raise TraceFormatError(path, "empty file", offset=0)
    try:
        return [json.loads(text)]
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise TraceFormatError(path, f"not JSON ({exc.msg})", offset=_byte_offset(text, exc.pos)) from None
    except (RecursionError, ValueError) as exc:
        raise TraceFormatError(path, f"not readable JSON ({type(exc).__name__}: {exc})") from None
    return _json_lines(text, path)


def _json_lines(text, path):
    out, pos = [], 0
    for line in text.splitlines(keepends=True):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise TraceFormatError(path, f"not JSON or JSON Lines ({exc.msg})",
                                       offset=_byte_offset(text, pos + exc.pos)) from None
            except (RecursionError, ValueError) as exc:
                raise TraceFormatError(path, f"not readable JSON ({type(exc).__name__})",
                                       offset=_byte_offset(text, pos)) from None
        pos += len(line)
    return out


def _byte_offset(text, char_pos):
    return len(text[:char_pos].encode("utf-8", "surrogatepass"))


def _json_number(value):
    """A number JSON text can hold: non-finite floats become protobuf's strings."""
    if isinstance(value, bool) or isinstance(value, int):
        return value
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _field(obj, camel, snake):
    """A protobuf JSON field by its lowerCamelCase or snake_case name."""
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


class _Builder:
    """Collects columns while walking the requests (one Python pass per span)."""

    def __init__(self, path, strict, partition):
        self.path, self.strict, self.partition = path, strict, int(partition)
        self.report = {}
        self.span_index = 0
        # processes and threads, in order of first appearance
        self.process_rows, self.process_cols = {}, {"pid": [], "name": [], "labels": []}
        self.thread_rows, self.thread_cols = {}, {"process": [], "tid": [], "name": []}
        self.cols = {k: [] for k in ("name", "category", "start", "duration", "thread", "args", "incomplete")}
        self.parent_key = []          # (trace_id, parent_span_id) or None
        self.pending_links = []       # (declaring span row, (trace_id, span_id), path)
        self.instants = {"name": [], "ts": [], "thread": []}
        self.keys = {}                # (trace_id, span_id) -> row

    # -- problems ------------------------------------------------------------
    def problem(self, reason, where, detail, index=None):
        """Count ``reason``; in strict mode raise it (notes are never raised)."""
        if self.strict and reason not in _NOTES:
            raise TraceFormatError(self.path, f"{where}: {detail} ({reason})",
                                   index=self.span_index if index is None else index)
        self.report[reason] = self.report.get(reason, 0) + 1

    def not_trace(self, detail):
        raise TraceFormatError(self.path, f"not an OTLP/JSON trace ({detail})")

    # -- walking ---------------------------------------------------------------
    def request(self, request, prefix):
        if not isinstance(request, dict):
            self.not_trace(f"top level is a {type(request).__name__}, expected an object")
        resource_spans = _field(request, "resourceSpans", "resource_spans")
        if resource_spans is None:
            self.not_trace("no resourceSpans")
        if not isinstance(resource_spans, list):
            self.not_trace(f"resourceSpans is a {type(resource_spans).__name__}, expected a list")
        for i, rs in enumerate(resource_spans):
            where = f"{prefix + ' ' if prefix else ''}resourceSpans[{i}]"
            if not isinstance(rs, dict):
                self.problem("bad_span", where, f"a {type(rs).__name__}, expected an object")
                continue
            process = self.process(rs.get("resource"), where)
            scopes = _field(rs, "scopeSpans", "scope_spans")
            scope_key = "scope"
            if scopes is None:  # OTLP before 0.15
                scopes = _field(rs, "instrumentationLibrarySpans", "instrumentation_library_spans")
                scope_key = "instrumentationLibrary"
            if scopes is None:
                continue
            if not isinstance(scopes, list):
                self.problem("bad_span", where, f"scopeSpans is a {type(scopes).__name__}, expected a list")
                continue
            for j, ss in enumerate(scopes):
                self.scope(ss, process, scope_key, f"{where}.scopeSpans[{j}]")

    def process(self, resource, where):
        attributes = self.attributes(resource.get("attributes") if isinstance(resource, dict) else None,
                                     f"{where}.resource")
        service = attributes.get("service.name")
        service = service if isinstance(service, str) and service else "unknown_service"
        instance = attributes.get("service.instance.id")
        pid = f"{service}/{instance}" if isinstance(instance, str) and instance else service
        row = self.process_rows.get(pid)
        if row is None:
            row = self.process_rows[pid] = len(self.process_rows)
            self.process_cols["pid"].append(pid)
            self.process_cols["name"].append(service)
            self.process_cols["labels"].append(json.dumps(attributes, sort_keys=True) if attributes else "")
        return row

    def scope(self, ss, process, scope_key, where):
        if not isinstance(ss, dict):
            self.problem("bad_span", where, f"a {type(ss).__name__}, expected an object")
            return
        scope = ss.get(scope_key) or ss.get("instrumentation_library" if scope_key != "scope" else "scope")
        scope = scope if isinstance(scope, dict) else {}
        scope_name = scope.get("name") if isinstance(scope.get("name"), str) else ""
        version = scope.get("version") if isinstance(scope.get("version"), str) else ""
        key = (process, scope_name)
        thread = self.thread_rows.get(key)
        if thread is None:
            thread = self.thread_rows[key] = len(self.thread_rows)
            self.thread_cols["process"].append(process)
            self.thread_cols["tid"].append(scope_name)
            label = f"{scope_name} {version}".strip() or self.process_cols["name"][process]
            self.thread_cols["name"].append(label)
        spans = ss.get("spans")
        if spans is None:
            return
        if not isinstance(spans, list):
            self.problem("bad_span", where, f"spans is a {type(spans).__name__}, expected a list")
            return
        for k, span in enumerate(spans):
            self.span(span, thread, f"{where}.spans[{k}]")
            self.span_index += 1

    def span(self, span, thread, where):
        if not isinstance(span, dict):
            self.problem("bad_span", where, f"a {type(span).__name__}, expected an object")
            return
        start = self.time(_field(span, "startTimeUnixNano", "start_time_unix_nano"), where, "startTimeUnixNano")
        if start is None:
            self.problem("bad_span", where, "startTimeUnixNano missing or unreadable; span skipped")
            return
        end_raw = _field(span, "endTimeUnixNano", "end_time_unix_nano")
        end = self.time(end_raw, where, "endTimeUnixNano")
        incomplete = end is None
        if incomplete:
            self.problem("bad_time", where, "endTimeUnixNano missing or unreadable; kept with zero length")
            end = start
        elif end < start:
            self.problem("negative_duration", where, f"ends {start - end} ns before it starts; zero length")
            end = start
        trace_id = self.hex_id(_field(span, "traceId", "trace_id"), 32, where, "traceId")
        span_id = self.hex_id(_field(span, "spanId", "span_id"), 16, where, "spanId")
        parent_raw = _field(span, "parentSpanId", "parent_span_id")
        parent_id = None if parent_raw in (None, "") else self.hex_id(parent_raw, 16, where, "parentSpanId")
        row = len(self.cols["start"])
        args = {"trace_id": trace_id, "span_id": span_id}
        if parent_id is not None and parent_id.strip("0"):
            args["parent_span_id"] = parent_id
            self.parent_key.append((trace_id, parent_id))
        else:
            self.parent_key.append(None)
        kind = self.enum(span.get("kind"), SPAN_KINDS, _KIND_PREFIX, where, "kind")
        args["kind"] = kind[0] if kind[0] is not None else span.get("kind")
        for camel, snake, out in (("traceState", "trace_state", "trace_state"), ("flags", "flags", "flags"),
                                  ("droppedAttributesCount", "dropped_attributes_count", "dropped_attributes"),
                                  ("droppedEventsCount", "dropped_events_count", "dropped_events"),
                                  ("droppedLinksCount", "dropped_links_count", "dropped_links")):
            value = _field(span, camel, snake)
            if value not in (None, "", 0):
                args[out] = _json_number(value) if isinstance(value, (int, float)) else str(value)
        status = self.status(span.get("status"), where)
        if status:
            args["status"] = status
        attributes = self.attributes(span.get("attributes"), where)
        if attributes:
            args["attributes"] = attributes
        events = self.events(span.get("events"), thread, where)
        if events:
            args["events"] = events
        self.links(span.get("links"), row, where)
        self.key(trace_id, span_id, row, where)
        name = span.get("name")
        self.cols["name"].append(name if isinstance(name, str) else "" if name is None else str(name))
        self.cols["category"].append(kind[1])
        self.cols["start"].append(start)
        self.cols["duration"].append(end - start)
        self.cols["thread"].append(thread)
        self.cols["incomplete"].append(incomplete)
        self.cols["args"].append(json.dumps(args, separators=(",", ":"), allow_nan=False, default=str))

    def key(self, trace_id, span_id, row, where):
        if not span_id:
            return
        key = (trace_id, span_id)
        if key in self.keys:
            self.problem("duplicate_span_id", where, f"span {span_id} of trace {trace_id} appears twice")
            return
        self.keys[key] = row

    # -- values ----------------------------------------------------------------
    def time(self, value, where, field):
        """Exact int64 ns from a decimal string or a JSON number; None when unreadable."""
        if value is None or isinstance(value, bool):
            return None
        if isinstance(value, str):
            text = value.strip()
            if not text.isascii() or not text.isdigit() or len(text) > 19:
                return None
            number = int(text)
        elif isinstance(value, int):
            number = value
        elif isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                return None
            self.problem("float_time", where, f"{field} is a JSON float ({value!r}); rounded to ns")
            number = round(value)
        else:
            return None
        return number if 0 <= number <= _INT64_MAX else None

    def hex_id(self, value, digits, where, field):
        """Lower-case hex ID text; a malformed one is reported and kept as text."""
        if value is None or value == "":
            if field != "parentSpanId":
                self.problem("bad_id", where, f"{field} missing")
            return ""
        if not isinstance(value, str) or len(value) != digits or not _HEX.match(value):
            self.problem("bad_id", where, f"{field} {str(value)[:40]!r} is not {digits} hex digits")
            return str(value)
        return value.lower()

    def enum(self, value, names, prefix, where, field):
        """(number or None, lower-case name) of an enum given as int or name."""
        if value is None:
            return 0, names[0]
        if isinstance(value, int) and not isinstance(value, bool):
            if 0 <= value < len(names):
                return value, names[value]
        elif isinstance(value, str):
            name = value.upper()
            name = name[len(prefix):] if name.startswith(prefix) else name
            if name.lower() in names:
                number = names.index(name.lower())
                return number, names[number]
        self.problem("unknown_enum", where, f"{field} {repr(value)[:40]} is not one of {', '.join(names)}")
        return None, "unknown"

    def status(self, status, where):
        if status is None or status == {}:
            return None
        if not isinstance(status, dict):
            self.problem("bad_attribute", where, f"status is a {type(status).__name__}, expected an object")
            return None
        out = {}
        if status.get("code") is not None:
            number, name = self.enum(status.get("code"), STATUS_CODES, _STATUS_PREFIX, where, "status.code")
            out["code"] = name if number is not None else status.get("code")
        message = status.get("message")
        if message not in (None, ""):
            out["message"] = message if isinstance(message, str) else str(message)
        return out or None

    def attributes(self, items, where):
        """OTLP KeyValue list -> dict (later duplicates win)."""
        out = {}
        if items is None:
            return out
        if not isinstance(items, list):
            self.problem("bad_attribute", where, f"attributes is a {type(items).__name__}, expected a list")
            return out
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("key"), str):
                self.problem("bad_attribute", where, "an attribute without a string key")
                continue
            ok, value = self.any_value(item.get("value"), 0)
            if not ok:
                self.problem("bad_attribute", where, f"attribute {item['key'][:40]!r} has a malformed value")
                continue
            out[item["key"]] = value
        return out

    def any_value(self, value, depth):
        """(ok, plain JSON value) of an OTLP AnyValue."""
        if value is None or value == {}:
            return True, None
        if not isinstance(value, dict) or len(value) != 1 or depth > _MAX_VALUE_DEPTH:
            return False, None
        (kind, inner), = value.items()
        if kind in ("stringValue", "string_value"):
            return isinstance(inner, str), inner
        if kind in ("boolValue", "bool_value"):
            return isinstance(inner, bool), inner
        if kind in ("intValue", "int_value"):
            if isinstance(inner, str) and re.fullmatch(r"-?[0-9]{1,19}", inner.strip()):
                inner = int(inner)
            ok = isinstance(inner, int) and not isinstance(inner, bool) and -2**63 <= inner < 2**63
            return ok, inner
        if kind in ("doubleValue", "double_value"):
            if isinstance(inner, str) and inner in ("NaN", "Infinity", "-Infinity"):
                return True, inner  # protobuf JSON writes non-finite doubles as these strings
            if not isinstance(inner, (int, float)) or isinstance(inner, bool):
                return False, None
            return True, _json_number(inner)
        if kind in ("bytesValue", "bytes_value"):
            return isinstance(inner, str), inner
        if kind in ("arrayValue", "array_value", "kvlistValue", "kvlist_value"):
            values = inner.get("values", []) if isinstance(inner, dict) else None
            if not isinstance(values, list):
                return False, None
            if kind.startswith("array"):
                out = []
                for v in values:
                    ok, plain = self.any_value(v, depth + 1)
                    if not ok:
                        return False, None
                    out.append(plain)
                return True, out
            out = {}
            for kv in values:
                if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
                    return False, None
                ok, plain = self.any_value(kv.get("value"), depth + 1)
                if not ok:
                    return False, None
                out[kv["key"]] = plain
            return True, out
        return False, None

    def events(self, events, thread, where):
        if events is None:
            return None
        if not isinstance(events, list):
            self.problem("bad_event", where, f"events is a {type(events).__name__}, expected a list")
            return None
        out = []
        for e, event in enumerate(events):
            here = f"{where}.events[{e}]"
            ts = self.time(_field(event, "timeUnixNano", "time_unix_nano"), here, "timeUnixNano") \
                if isinstance(event, dict) else None
            if ts is None:
                self.problem("bad_event", here, "not an object with a readable timeUnixNano; skipped")
                continue
            name = event.get("name")
            name = name if isinstance(name, str) else "" if name is None else str(name)
            entry = {"name": name, "time_ns": ts}
            attributes = self.attributes(event.get("attributes"), here)
            if attributes:
                entry["attributes"] = attributes
            out.append(entry)
            self.instants["name"].append(name)
            self.instants["ts"].append(ts)
            self.instants["thread"].append(thread)
        return out

    def links(self, links, row, where):
        if links is None:
            return
        if not isinstance(links, list):
            self.problem("bad_link", where, f"links is a {type(links).__name__}, expected a list")
            return
        for k, link in enumerate(links):
            here = f"{where}.links[{k}]"
            if not isinstance(link, dict):
                self.problem("bad_link", here, "not an object; skipped")
                continue
            trace_id = self.hex_id(_field(link, "traceId", "trace_id"), 32, here, "traceId")
            span_id = self.hex_id(_field(link, "spanId", "span_id"), 16, here, "spanId")
            if span_id:
                self.pending_links.append((row, (trace_id, span_id)))

    def strings(self, values, what):
        """A pyarrow string array; lone UTF-16 surrogates (JSON escapes such as
        ``\\ud800``) cannot be UTF-8: each becomes U+FFFD (``bad_text``)."""
        try:
            return pa.array(values, pa.string())
        except UnicodeEncodeError:
            fixed = []
            for i, value in enumerate(values):
                if _SURROGATE.search(value):
                    self.problem("bad_text", f"{what} {i}", "a lone UTF-16 surrogate; replaced by U+FFFD",
                                 index=i if what == "span" else None)
                    value = _SURROGATE.sub("\ufffd", value)
                fixed.append(value)
            return pa.array(fixed, pa.string())

    # -- the model ---------------------------------------------------------------
    def finish(self):
        n = len(self.cols["start"])
        parent = np.full(n, -1, np.int64)
        for row, key in enumerate(self.parent_key):
            if key is None:
                continue
            found = self.keys.get(key)
            if found is None:
                self.problem("missing_parent", f"span {row}", f"parent {key[1]} is not in the file")
            else:
                parent[row] = found
        sources, targets = [], []
        for row, key in self.pending_links:
            found = self.keys.get(key)
            if found is None:
                self.problem("missing_link_target", f"span {row}", f"linked span {key[1]} is not in the file")
                continue
            sources.append(found)
            targets.append(row)
        processes = table("processes", {
            "id": np.arange(len(self.process_rows), dtype=np.uint32), "pid": self.strings(self.process_cols["pid"], "service"),
            "name": self.strings(self.process_cols["name"], "service"), "labels": self.process_cols["labels"],
            "partition": np.full(len(self.process_rows), self.partition, np.uint32)})
        nt = len(self.thread_rows)
        threads = table("threads", {
            "id": np.arange(nt, dtype=np.uint32), "process": np.asarray(self.thread_cols["process"], np.uint32),
            "tid": self.strings(self.thread_cols["tid"], "scope"),
            "name": self.strings(self.thread_cols["name"], "scope"),
            "sort_index": np.arange(nt, dtype=np.int64), "kind": ["async"] * nt})
        links = table("links", {"source": np.asarray(sources, np.uint32), "target": np.asarray(targets, np.uint32),
                                "kind": ["link"] * len(sources)})
        inst_thread = np.asarray(self.instants["thread"], np.uint32)
        thread_process = np.asarray(self.thread_cols["process"], np.uint32)
        instants = table("instants", {
            "name": self.strings(self.instants["name"], "event"), "category": ["event"] * len(inst_thread),
            "ts_ns": np.asarray(self.instants["ts"], np.int64),
            "process": thread_process[inst_thread] if nt else np.zeros(0, np.uint32),
            "thread": inst_thread, "scope": ["t"] * len(inst_thread)})
        return assemble(
            name=self.strings(self.cols["name"], "span"), category=pa.array(self.cols["category"], pa.string()),
            start_ns=np.asarray(self.cols["start"], np.int64), duration_ns=np.asarray(self.cols["duration"], np.int64),
            thread=np.asarray(self.cols["thread"], np.uint32), threads=threads, processes=processes,
            parent=parent, args=pa.array(self.cols["args"], pa.string()),
            incomplete=np.asarray(self.cols["incomplete"], bool), links=links, instants=instants,
            report=self.report, sources=(self.path,))

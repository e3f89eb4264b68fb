"""Benchmark results as data: :class:`Table` rows printed as they are verified
and written, unchanged, into ``--json`` result files; :class:`Report` holds
one run's header and tables.

A row holds raw values (sizes as row counts, times in seconds under keys
ending in ``_s``, ratios as floats); how a cell reads is the column's
``format``, so the fixed-width table on stdout and the markdown tables that
``python -m gpuviz.bench.report`` generates from a result file format the
same row objects the same way.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

__all__ = ["Column", "Table", "Report", "cell", "fmt_time", "size_label", "SCHEMA"]

#: The result-file schema this module writes and ``report`` reads.
SCHEMA = "gpuviz.bench/1"

#: Cell formats; ``of`` names the row key the format compares with.
FORMATS = ("text", "size", "us", "ratio", "us_ratio", "target")


def size_label(n: int) -> str:
    """``16777216`` -> ``"16M"``, ``4096`` -> ``"4K"``, other counts as they are."""
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if n and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def fmt_time(seconds) -> str:
    """Seconds as µs (one decimal below 10 ms); ``-`` for no measurement."""
    if seconds is None:
        return "-"
    return f"{seconds * 1e6:.1f}" if seconds < 1e-2 else f"{seconds * 1e6:.0f}"


@dataclass(frozen=True)
class Column:
    """One column: the row key it shows, its title and printed width, and its
    format: ``text``; ``size`` (a row count as 16M); ``us`` (seconds as µs);
    ``ratio``; ``us_ratio`` (µs and, in brackets, the ratio to the time under
    key ``of``); ``target`` (a bound on the ratio under key ``of``, read
    ``≤1.25 ok`` or ``≤1.25 MISS``)."""

    key: str
    title: str
    width: int = 10
    format: str = "text"
    of: str | None = None

    def __post_init__(self):
        if self.format not in FORMATS:
            raise ValueError(f'Column "{self.key}" has unknown format "{self.format}" (one of {FORMATS})')


def cell(column: Column, row: dict) -> str:
    """The text of ``row``'s cell in ``column`` (stdout and markdown alike)."""
    value = row.get(column.key)
    if column.format == "target":
        if value is None:
            return ""
        return f"≤{value:g} ok" if row[column.of] <= value else f"≤{value:g} MISS"
    if value is None:
        return "-" if column.format != "text" else ""
    if column.format == "size":
        return size_label(value) if isinstance(value, int) else str(value)
    if column.format == "us":
        return fmt_time(value)
    if column.format == "ratio":
        return f"{value:.2f}"
    if column.format == "us_ratio":
        base = row.get(column.of)
        return fmt_time(value) + (f" ({value / base:.2f})" if base else "")
    return str(value)


class Table:
    """Rows of one benchmark, printed as they are added (after verification)
    and kept as data for the result file.

    ``add(**values)`` takes raw values under the columns' keys (and any extra
    keys worth keeping in the JSON); ``note(text, **data)`` prints a line
    that belongs to the table (a per-node breakdown, a verdict) and keeps it.
    """

    def __init__(self, name: str, title: str, columns, *, reference: str | None = None, echo: bool = True):
        self.name = name
        self.title = title
        self.columns = tuple(columns)
        self.reference = reference
        self.echo = echo
        self.rows: list = []
        self.notes: list = []
        self._started = False

    def _line(self, cells) -> str:
        return "  ".join(text.ljust(max(c.width, len(c.title))) if c.format == "text"
                         else text.rjust(max(c.width, len(c.title))) for c, text in zip(self.columns, cells))

    def _start(self):
        if not self._started and self.echo:
            print(f"\n{self.title}" + (f" (ref = {self.reference})" if self.reference else ""))
            print(self._line([c.title for c in self.columns]))
        self._started = True

    def add(self, **values) -> dict:
        missing = [c.key for c in self.columns if c.key not in values and c.format != "target"]
        if missing:
            raise ValueError(f'Table "{self.name}" row lacks {missing}')
        self._start()
        self.rows.append(values)
        if self.echo:
            print(self._line([cell(c, values) for c in self.columns]), flush=True)
        return values

    def note(self, text: str, **data) -> None:
        self._start()
        self.notes.append({"text": text, **data})
        if self.echo:
            print(text, flush=True)

    def markdown(self) -> str:
        """The rows as a GitHub markdown table (text left, numbers right)."""
        lines = ["| " + " | ".join(c.title for c in self.columns) + " |",
                 "|" + "|".join("---" if c.format == "text" else "---:" for c in self.columns) + "|"]
        lines += ["| " + " | ".join(cell(c, row).replace("|", "\\|") for c in self.columns) + " |"
                  for row in self.rows]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "reference": self.reference,
                "columns": [asdict(c) for c in self.columns], "rows": self.rows, "notes": self.notes}

    @classmethod
    def from_dict(cls, data: dict) -> "Table":
        table = cls(data["name"], data["title"], [Column(**c) for c in data["columns"]],
                    reference=data.get("reference"), echo=False)
        table.rows, table.notes = list(data["rows"]), list(data.get("notes", []))
        return table


class Report:
    """One run: its header (see ``harness.run_header``), its tables in the
    order they were made, and the benchmarks whose output did not match."""

    def __init__(self, header: dict | None = None):
        self.header = header or {}
        self.tables: list = []
        self.failures: list = []

    def table(self, name: str, title: str, columns, *, reference: str | None = None) -> Table:
        table = Table(name, title, columns, reference=reference)
        self.tables.append(table)
        return table

    def to_dict(self) -> dict:
        return {"schema": SCHEMA, "header": self.header, "tables": [t.to_dict() for t in self.tables],
                "failures": self.failures}

    def write(self, path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=1, ensure_ascii=False)
            f.write("\n")

    @classmethod
    def load(cls, path) -> "Report":
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("schema") != SCHEMA:
            raise ValueError(f'result file "{path}" has schema {data.get("schema")!r}, expected "{SCHEMA}"')
        report = cls(data["header"])
        report.tables = [Table.from_dict(t) for t in data["tables"]]
        report.failures = list(data.get("failures", []))
        return report

"""Markdown from committed benchmark result files (``--json`` output).

``python -m gpuviz.bench.report RESULT.json ...`` prints each file's tables as
markdown, each preceded by the command and the header that produced it
(commit, wgpu and wgpu-native, adapter and driver, default tunings).

``python -m gpuviz.bench.report --update docs/benchmarks.md`` rewrites every
marked region of that file from the result file the marker names (a path
relative to the markdown file; ``tables=`` optionally picks tables by name)::

    <!-- results: results/scan-h200-2026-12-01.json tables=scan,reduction -->
    ...generated, never edited by hand...
    <!-- end results -->

``--check`` exits with 1 (and changes nothing) when a region is out of date.
Cells are formatted by the same code that printed them (``tables.cell``).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from .tables import Report

__all__ = ["render", "update", "main"]

MARKER = re.compile(r"(?P<open><!-- results: (?P<path>\S+)(?: tables=(?P<tables>[\w,-]+))? -->\n)"
                    r"(?P<body>.*?)(?P<close><!-- end results -->)", re.S)


def _header_lines(header: dict, source: str) -> list:
    info = header.get("adapter", {})
    driver = "; ".join(f"{k} `{info[k]}`" for k in ("vendor", "architecture", "description") if info.get(k))
    commit = header.get("commit", "unknown")
    origin = header.get("commit_source", "none")
    tree = (f"`{commit}`" + ("" if origin == "git" else f" (from {origin})")
            + f", source digest `{header.get('source_digest', '?')}`")
    lines = [f"Command (recorded in `{source}`, {header.get('date', 'undated')}"
             + (f", {header['total_s']:.0f} s" if "total_s" in header else "") + "):", "",
             f"    {header.get('command', '(recorded without its command)')}", "",
             f"Tree {tree}; wgpu {header.get('wgpu', '?')}, wgpu-native {header.get('wgpu_native', '?')}; "
             f"adapter {info.get('device', '?')} ({header.get('backend', '?')}), driver: {driver or '?'}; "
             f"subgroups {header.get('subgroups', '?')}, float32 atomics {header.get('float32_atomics', '?')}"
             + "".join(f"; {k}={v}" for k, v in header.get("env", {}).items()) + "."]
    tunings = header.get("tuning", {})
    if tunings:
        lines += ["", "<details><summary>Default tunings in effect</summary>", ""]
        lines += [f"- `{text}`" for text in tunings.values()]
        lines += ["", "</details>"]
    return lines


def render(report: Report, source: str, tables=None) -> str:
    """Markdown for the ``tables`` (names; all if None) of one result file."""
    lines = _header_lines(report.header, source)
    chosen = [t for t in report.tables if tables is None or t.name in tables]
    missing = sorted(set(tables or ()) - {t.name for t in report.tables})
    if missing:
        raise ValueError(f'result file "{source}" has no table {missing} (has {[t.name for t in report.tables]})')
    for table in chosen:
        lines += ["", f"**{table.title}**" + (f" (reference: {table.reference})" if table.reference else ""), ""]
        lines.append(table.markdown())
        lines += ([""] + [f"- {note['text'].strip()}" for note in table.notes]) if table.notes else []
    for failure in report.failures:
        lines += ["", f"**{failure['benchmark']}: not printed, output did not match numpy** ({failure['error']})"]
    return "\n".join(lines) + "\n\n"  # a blank line ends the last table before the closing marker


def update(markdown_path, *, check: bool = False) -> bool:
    """Rewrite the marked regions of ``markdown_path``; returns whether any
    changed (with ``check``, the file is left as it is)."""
    path = Path(markdown_path)
    text = path.read_text(encoding="utf-8")

    def regenerate(match) -> str:
        source = match["path"]
        if not (path.parent / source).is_file():
            raise FileNotFoundError(f'{path}: marked region names "{source}", which is not a file under {path.parent}')
        tables = match["tables"].split(",") if match["tables"] else None
        body = render(Report.load(path.parent / source), source, tables)
        return match["open"] + body + match["close"]

    new = MARKER.sub(regenerate, text)
    if new != text and not check:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.report", description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="*", help="result files to print as markdown")
    parser.add_argument("--update", metavar="MARKDOWN", help="rewrite the marked regions of this file")
    parser.add_argument("--check", action="store_true", help="with --update: exit 1 if a region is out of date")
    args = parser.parse_args(argv)
    for source in args.results:
        sys.stdout.write(render(Report.load(source), source) + "\n")
    if args.update:
        changed = update(args.update, check=args.check)
        if args.check and changed:
            print(f"{args.update}: generated regions are out of date; run "
                  f"python -m gpuviz.bench.report --update {args.update}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Progress of a running cell, read from its events.jsonl as it grows."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TextIO


class ProgressReporter:
    """Prints `[done/planned] counts` lines: rewritten in place on a terminal, and at most
    every `interval` seconds (or each 10%) in CI logs."""

    def __init__(
        self, events: Path, collected: Path, stream: TextIO | None = None, interval: float = 20.0, enabled: bool = True
    ) -> None:
        self.events = events
        self.collected = collected
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.interval = interval
        self.enabled = enabled
        self.offset = 0
        self.partial = b""
        self.finished = 0
        self.counts: Counter = Counter()
        self.planned: int | None = None
        self.last_print = 0.0
        self.last_decile = -1
        self.last_line = ""
        self.current = ""
        self._reported: set[object] = set()  # tests with a report of their own (their finish is no pass)

    def _planned(self) -> int | None:
        if self.planned is None and self.collected.exists():
            try:
                self.planned = int(json.loads(self.collected.read_text())["count"])
            except (ValueError, KeyError, OSError):
                return None
        return self.planned

    def poll(self) -> None:
        if not self.enabled or not self.events.exists():
            return
        with self.events.open("rb") as handle:
            handle.seek(self.offset)
            chunk = handle.read()
        self.offset += len(chunk)
        lines = (self.partial + chunk).split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "start":
                self.current = event.get("nodeid", "")
            elif event.get("event") == "pass":
                # A test that only passed is one `pass` line (cell format 2): no report comes for it.
                self.finished += 1
                self.counts["passed"] += 1
            elif event.get("event") == "finish":
                self.finished += 1
                passed = event.get("passed")
                if isinstance(passed, dict) and "call" in passed and event.get("nodeid") not in self._reported:
                    self.counts["passed"] += 1  # its call passed and no report said otherwise
            elif event.get("event") == "report":
                self._reported.add(event.get("nodeid"))
                outcome = event.get("outcome")
                if event.get("when") == "call" or (outcome in ("failed", "skipped") and event.get("when") == "setup"):
                    self.counts["xfailed" if event.get("wasxfail") and outcome == "skipped" else outcome] += 1
        self._show()

    def _line(self) -> str:
        planned = self._planned()
        total = f"{planned}" if planned is not None else "?"
        counts = ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()))
        return f"[{self.finished:>4}/{total}] {counts or 'starting'}"

    def _show(self, force: bool = False) -> None:
        now = time.monotonic()
        planned = self._planned()
        decile = (10 * self.finished // planned) if planned else -1
        if self.tty:
            text = self._line()
            current = self.current[-60:]
            self.stream.write(f"\r{text}  {current}".ljust(120)[:120])
            self.stream.flush()
        elif force or decile != self.last_decile or now - self.last_print >= self.interval:
            line = self._line()
            if force and line == self.last_line:
                return  # the closing line is the one just printed: once is enough
            self.stream.write(line + "\n")
            self.stream.flush()
            self.last_print, self.last_decile, self.last_line = now, decile, line

    def done(self) -> None:
        if not self.enabled:
            return
        self.poll()
        if self.tty:
            self.stream.write("\n")
        else:
            self._show(force=True)

"""The output folder of an experiment, published whole or not at all.

Everything is written into a staging folder beside the destination (``.NAME.partial-PID``) and swapped
into place at the end, so a crash or Ctrl-C never leaves half a result where the last good one was. A
destination that already exists is replaced only if this tool wrote it: it carries a marker file listing
what it wrote (folders of the earlier bash front door are recognised by their fixed names). Anything else
there is refused with exit code 2 — the tool never deletes a file it did not write.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import tempfile

from .env import UsageError

MARKER = ".asyncdp-experiments.json"
# What `run_experiments.sh` wrote into an output folder before this package (no marker then).
_LEGACY = {"runs", "plots", "data", "reference", "REPORT.md", "manifest.tsv", ".failed", ".mpi_queue", "audit",
           "tables", "figures", "logs"}


def _ours(folder: pathlib.Path) -> tuple[bool, list[str]]:
    """Whether every entry of ``folder`` was written by this tool; the foreign entries otherwise."""
    entries = sorted(p.name for p in folder.iterdir())
    marker = folder / MARKER
    if marker.is_file():
        try:
            listed = set(json.loads(marker.read_text())["entries"]) | {MARKER}
        except (ValueError, KeyError, TypeError):
            listed = {MARKER}
    else:
        listed = _LEGACY
    foreign = [e for e in entries if e not in listed and not (e.endswith((".csv", ".log")) and not marker.is_file())]
    return not foreign, foreign


class Output:
    """A staging folder for one run of a mode; ``publish()`` moves it to ``destination``."""

    def __init__(self, destination: pathlib.Path, mode: str):
        self.destination = destination.resolve()
        self.mode = mode
        if self.destination.exists():
            if not self.destination.is_dir():
                raise UsageError(f"--out {destination}: exists and is not a folder")
            ok, foreign = _ours(self.destination)
            if not ok:
                shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
                raise UsageError(f"--out {destination}: holds files run_experiments.sh did not write ({shown}); "
                                 "choose another folder or empty it")
        self.destination.parent.mkdir(parents=True, exist_ok=True)
        self.root = pathlib.Path(tempfile.mkdtemp(prefix=f".{self.destination.name}.partial-",
                                                  dir=self.destination.parent))

    def path(self, relative: str) -> pathlib.Path:
        p = self.root / relative
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def write_text(self, relative: str, text: str) -> pathlib.Path:
        p = self.path(relative)
        p.write_text(text)
        return p

    def publish(self) -> pathlib.Path:
        entries = sorted(p.name for p in self.root.iterdir() if p.name != MARKER)
        (self.root / MARKER).write_text(json.dumps({"mode": self.mode, "entries": entries}, indent=1) + "\n")
        old = None
        if self.destination.exists():
            old = pathlib.Path(tempfile.mkdtemp(prefix=f".{self.destination.name}.previous-",
                                                dir=self.destination.parent))
            os.rename(self.destination, old / "content")
        os.rename(self.root, self.destination)
        if old is not None:
            shutil.rmtree(old)
        return self.destination

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

"""Make tests/data/upstream/2026-12-02/: index responses `harness upstream --responses` replays.

Two kinds of file, kept apart in PROVENANCE.md:

- recorded: `PIP_INDEX_URL=https://pypi.org/simple python -m harness upstream --record DIR` on
  2026-12-02 (pip's `index versions` output, PyPI's PEP 691 JSON page of torch). The PyPI page is
  cut to the files of torch 2.12.0 and newer (`--trim`): the registry starts at 2.12, and the whole
  page is 420 kB. Nothing else is changed.
- hand-made: download.pytorch.org is not reachable from the machine that made the recording, so its
  three channel pages (release, test, nightly) are written here in PEP 691's JSON format, with the
  builds upstream-releases.md and the registry's sources name (`--channels`).

    python tests/data/upstream/make_recording.py --trim RECORDED_DIR     # copies and cuts the PyPI files
    python tests/data/upstream/make_recording.py --channels              # writes the channel pages
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent / "2026-12-02"
PYTHONS = ("cp311-cp311", "cp312-cp312", "cp313-cp313", "cp314-cp314", "cp315-cp315", "cp314-cp314t", "cp315-cp315t")
PYTHONS_214 = ("cp310-cp310", "cp311-cp311", "cp312-cp312", "cp313-cp313", "cp314-cp314", "cp314-cp314t")
# What each channel serves (upstream-releases.md, read 2026-12-02; the registry's sources):
RELEASE = {
    "2.14.1": (PYTHONS_214, ("cpu", "cu126", "cu130", "cu132", "rocm7.2", "rocm7.14", "xpu")),
    "2.15.0": (PYTHONS, ("cpu", "cu130", "cu132", "rocm7.14", "rocm10.0", "xpu")),
}
BUILDS_216 = ("cpu", "cu130", "cu132", "cu134", "rocm7.14", "rocm10.0", "xpu")
TEST = {"2.15.0": (PYTHONS, RELEASE["2.15.0"][1]), "2.16.0": (PYTHONS, BUILDS_216)}
NIGHTLY = {
    "2.16.0.dev20261130": (PYTHONS, BUILDS_216),
    "2.16.0.dev20261201": (PYTHONS, BUILDS_216),
    # trunk after the 2.16 branch cut builds 2.17 nightlies (with ROCm 10.1: pytorch #196753)
    "2.17.0.dev20261201": (PYTHONS, ("cpu", "cu130", "cu132", "cu134", "rocm7.14", "rocm10.1", "xpu")),
}


def page(builds: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]) -> dict:
    files = [
        {
            "filename": f"torch-{version}+{variant}-{tags}-manylinux_2_28_x86_64.whl",
            "url": f"https://download.pytorch.org/whl/{variant}/torch-{version}%2B{variant}-{tags}-manylinux_2_28_x86_64.whl",
            "hashes": {},
        }
        for version, (pythons, variants) in builds.items()
        for variant in variants
        for tags in pythons
    ]
    return {"meta": {"api-version": "1.0"}, "name": "torch", "files": files}


def write_channels() -> None:
    root = HERE / "pages" / "download.pytorch.org" / "whl"
    for path, builds in (("torch.json", RELEASE), ("test/torch.json", TEST), ("nightly/torch.json", NIGHTLY)):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(page(builds), indent=1) + "\n", encoding="utf-8")


def trim(recorded: Path) -> None:
    for source in recorded.rglob("*"):
        if source.is_file():
            target = HERE / source.relative_to(recorded)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    pypi = HERE / "pages" / "pypi.org" / "simple" / "torch.json"
    data = json.loads(pypi.read_text(encoding="utf-8"))

    def kept(name: str) -> bool:
        match = re.match(r"torch-(\d+)\.(\d+)\.", name)
        return bool(match) and (int(match[1]), int(match[2])) >= (2, 12)

    data["files"] = [f for f in data["files"] if kept(f["filename"])]
    pypi.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trim", type=Path, metavar="RECORDED_DIR")
    parser.add_argument("--channels", action="store_true")
    args = parser.parse_args()
    if args.trim:
        trim(args.trim)
    if args.channels:
        write_channels()

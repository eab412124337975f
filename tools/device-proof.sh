#!/usr/bin/env bash
# The device proof, in one command: on a host where torch is already installed (a GPU host with
# no network, nothing but Python and its torch), run the shared suites natively on its devices
# and write the cell and the merged page.
#
#   tools/device-proof.sh OUT_DIR [-- harness run options, e.g. -k linalg --test-timeout 600]
#   PYTHON=/opt/conda/bin/python tools/device-proof.sh OUT_DIR     (default PYTHON: python3)
#
# Needs: Python 3.10+ that imports torch (and jinja2, which torch itself requires).
# Brings: the harness (this checkout) and its pure-Python dependencies from tools/proof-wheels/,
# unpacked into OUT_DIR, not installed: no pip, no venv, no network, nothing written elsewhere.
# Writes: OUT_DIR/results/<cell id>-<time>/ (the cell: manifest.json, junit.xml, events.jsonl,
# collected.json, output.log), OUT_DIR/results/matrix.json and summary.md, OUT_DIR/site/
# (index.html, matrix.json, badges/, history/) and OUT_DIR/proof.log (all it printed).
# Exit: that of `harness run`: 0 all passed, 1 some tests failed, 3 NO DATA (no device, no torch
# for PYTHON, or a torch that is no backend's build; the page still shows the column as NO DATA);
# 2 for bad arguments or a Python older than 3.10.
set -uo pipefail

if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
[ "${1:-}" = "--" ] && shift
python="${PYTHON:-python3}"
log="$out/proof.log"
: >"$log"
say() { echo "device proof: $*" | tee -a "$log" >&2; }

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  say "error: $python is not Python 3.10 or newer ($("$python" -V 2>&1 || echo 'not found')); set PYTHON to the Python that has torch"
  exit 2
fi
if ! about="$("$python" -c '
import torch
acc = torch.accelerator.current_accelerator() if hasattr(torch, "accelerator") else None
kind = acc.type if acc is not None else None
devices = torch.accelerator.device_count() if acc is not None else 0
hip = getattr(torch.version, "hip", None)
print(f"torch {torch.__version__} (cuda {torch.version.cuda}, hip {hip}), accelerator {kind} x{devices}")' 2>&1)"; then
  say "error: $python cannot import torch: $(echo "$about" | tail -1); install torch for it, or set PYTHON to the one that has it"
  exit 3  # infrastructure, as `harness run` without torch (harness/errors.py)
fi
say "$("$python" -V 2>&1) at $(command -v "$python" || echo "$python"), $(echo "$about" | tail -1)"
"$python" -c 'import jinja2' 2>/dev/null || say "warning: jinja2 (a torch dependency) is missing: the page cannot be written"

# The harness's pure-Python dependencies, unpacked where only this proof looks.
site="$out/.proof/site"
rm -rf "$site" && mkdir -p "$site"
for wheel in "$repo"/tools/proof-wheels/*.whl; do
  "$python" -m zipfile -e "$wheel" "$site" || { say "error: cannot unpack $wheel"; exit 2; }
done
path="$site:$repo"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  path="$repo/tools/py310:$path"  # tomllib, enum.StrEnum, datetime.UTC for Python 3.10
fi
export PYTHONPATH="$path${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1

say "running the suites natively: harness run --results-dir $out/results $*"
"$python" -m harness run --results-dir "$out/results" --suites "$repo/suites" "$@" 2>&1 | tee -a "$log"
rc=${PIPESTATUS[0]}
if [ -f "$out/results/matrix.json" ]; then
  "$python" -m harness publish "$out/site" --matrix "$out/results/matrix.json" 2>&1 | tee -a "$log"
  say "cell: $(ls -d "$out"/results/*/ 2>/dev/null | tail -1)"
  say "page: $out/site/index.html"
else
  say "no matrix was written (see $log)"
fi
case "$rc" in
  0) say "done: every test passed or was skipped with a reason (exit 0)" ;;
  1) say "done: some tests failed (exit 1); the cell and the page show which" ;;
  3) say "done: NO DATA (exit 3): nothing ran; the line above says what is missing" ;;
  *) say "done: harness run ended with exit $rc" ;;
esac
exit "$rc"

#!/usr/bin/env bash
# The GPU checks of one device session, in one command (tools/device-proof.sh plus the drills on the device):
#   tools/device-check.sh OUT_DIR
# 1. the device proof (every suite, natively, 4 workers) in the background;
# 2. beside it, the drills on the claimed graph, linear-algebra, sparsity and FP8 tests: a control run,
#    then --drill=silent-skip and --drill=fallback; each run's JUnit and log go to OUT_DIR;
# 3. then the GPU broken twins of tests/suites (each breakage must turn its test red on the device).
set -uo pipefail
out="$(mkdir -p "$1" && cd "$1" && pwd)"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PYTHONUNBUFFERED=1
(timeout "${PROOF_LIMIT:-330}" "$repo/tools/device-proof.sh" /tmp/proof -- --workers 4 --test-timeout 120 \
  >"$out/proof-stdout.log" 2>&1; echo "proof rc $?" >>"$out/proof-stdout.log") &
proof=$!
sleep 20  # the proof unpacks its wheelhouse first; the drills use the same pytest
export PYTHONPATH="/tmp/proof/.proof/site:$repo${PYTHONPATH:+:$PYTHONPATH}"
cd "$repo/suites" || exit 2
tests=(graphs graph_capture "compile/test_compile_dynamic.py::test_reduce_overhead_records_device_graphs"
       linalg/test_eigh.py linalg/test_svd.py linalg/test_linalg_surface.py sparsity scaled_mm_mx)
for drill in none silent-skip fallback; do
  opt=(); [ "$drill" = none ] || opt=("--drill=$drill")
  timeout "${DRILL_LIMIT:-100}" python3 -m pytest "${tests[@]}" -q -p no:cacheprovider -n 4 "${opt[@]}" \
    --junitxml="$out/drill-$drill.xml" >"$out/drill-$drill.log" 2>&1
  echo "drill $drill rc $? $(tail -1 "$out/drill-$drill.log")"
done
cd "$repo" || exit 2
timeout "${TWIN_LIMIT:-120}" python3 -m pytest tests/suites/test_broken_depth_features.py -k "gpu or cudnn" -q \
  -p no:cacheprovider --junitxml="$out/twins.xml" >"$out/twins.log" 2>&1
echo "gpu twins rc $? $(tail -1 "$out/twins.log")"
wait "$proof"
tail -3 "$out/proof-stdout.log"
tar czf "$out/proof.tgz" -C /tmp proof

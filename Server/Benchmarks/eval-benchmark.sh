#!/usr/bin/env bash
# `vane eval` over many contexts ("who gets what" over a sample) beside Firebase's own server-side
# evaluator, firebase-admin from PyPI, on the same template and contexts. Whole processes, wall
# clock: process start, reading the files, evaluating, writing the output. See Eval/eval_bench.py.
#
#   Server/Benchmarks/eval-benchmark.sh [ROUNDS]      (default 7; the medians are printed)
#
# EVAL_PARAMETERS (300) and EVAL_CONTEXTS (2000) size the work. VANE_BIN times another vane binary
# (an older build, for a before/after) instead of building this one. firebase-admin is installed
# into a virtual environment in VANE_EVAL_VENV (default ~/.cache/vane-eval-bench-venv).
# EVAL_FIREBASE=0 runs vane alone, without firebase-admin (no download, no comparison): what
# scripts/check-benchmarks runs to check that the benchmark still works.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-7}
parameters=${EVAL_PARAMETERS:-300}
contexts=${EVAL_CONTEXTS:-2000}
venv=${VANE_EVAL_VENV:-$HOME/.cache/vane-eval-bench-venv}
helper=$(pwd)/Server/Benchmarks/Eval/eval_bench.py

firebase=${EVAL_FIREBASE:-1}
if [ "$firebase" = 1 ]; then
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/python" -c 'import firebase_admin' 2>/dev/null || "$venv/bin/pip" install --quiet 'firebase-admin==7.7.0'
    python="$venv/bin/python"
else
    python=python3
fi

if [ -z "${VANE_BIN:-}" ]; then
    log=$(mktemp)
    swift build -c release --package-path Server --product vane >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
    rm -f "$log"
    VANE_BIN="$(swift build -c release --package-path Server --show-bin-path)/vane"
fi
vane=$(cd "$(dirname "$VANE_BIN")" && pwd)/$(basename "$VANE_BIN")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$helper" generate "$work" --parameters "$parameters" --contexts "$contexts"
cd "$work"

echo "vane eval over $contexts contexts x $parameters parameters (40 conditions), $rounds rounds"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(date -u +%Y-%m-%dT%H:%MZ)"
[ "$firebase" = 1 ] && echo "firebase-admin $("$python" -c 'import firebase_admin; print(firebase_admin.__version__)'), $("$python" --version)"
echo "vane: $vane"
echo

if [ "$firebase" != 1 ]; then
    # vane alone: it runs, and its output is one result per context.
    "$python" "$helper" time "$rounds" "vane=$vane eval --template template.json --context contexts.json"
    python3 -c "import json, sys; results = json.load(open('vane.out')); sys.exit(len(results) != $contexts)" ||
        { echo "vane eval did not give one result per context" >&2; exit 1; }
    exit 0
fi

# One untimed run of each first (page cache, venv), then rounds alternating between the two; each
# writes its output to NAME.out.
timings=$("$python" "$helper" time "$rounds" \
    "firebase-admin=$python $helper firebase template.json contexts.json" \
    "vane=$vane eval --template template.json --context contexts.json")
echo "$timings" | awk '{ printf "%-15s median %.3f s   runs:", $1, $2; for (i = 3; i <= NF; i++) printf " %.3f", $i; print "" }'
firebase_median=$(awk '$1 == "firebase-admin" { print $2 }' <<<"$timings")
vane_median=$(awk '$1 == "vane" { print $2 }' <<<"$timings")
echo "ratio: vane is $(python3 -c "print(f'{$firebase_median / $vane_median:.1f}')")x faster than firebase-admin (target: at least 20x)"
echo

echo "same values? (every context, every key)"
same=0
"$python" "$helper" compare template.json contexts.json firebase-admin.out vane.out || same=$?
echo
echo "inputs on which firebase-admin (Python) and Firebase's Node SDK disagree; Vane follows Node:"
"$python" "$helper" probe "$vane"
exit "$same"

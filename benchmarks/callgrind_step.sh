#!/usr/bin/env bash
# benchmarks/callgrind_step.sh — instructions per LibTorch training step, plain loop vs
# TrainingEpochRunner with 0, 8 static and 8 runtime hooks and with default_hooks' training
# share, under callgrind
# (docs/benchmarks.md, "Training step"). Deterministic for one binary and one BLAS.
#
#   benchmarks/callgrind_step.sh [BUILD_DIR]     (default: build/)
#
# Environment: EPOCHS (measured epochs of 64 steps, default 2). One thread
# (OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1). Only `measured_epochs` is counted, after
# one warm-up epoch.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
epochs="${EPOCHS:-2}"
steps=$((epochs * 64))
command -v valgrind >/dev/null || { echo "valgrind not found (Debian: apt-get install valgrind)" >&2; exit 2; }
cmake --build "$build" --target hookforge_bench_training_step >&2
driver="$build/benchmarks/hookforge_bench_training_step"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

blas="$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)"
echo "BLAS: $blas; $steps measured steps per variant"
echo
echo "| variant | instructions per step | ratio to plain |"
echo "|---|---:|---:|"
plain=""
for v in plain runner/0 runner/8 runtime/8 runner/default; do
  out="$work/callgrind.${v//\//_}"
  valgrind --tool=callgrind --toggle-collect='*measured_epochs*' --callgrind-out-file="$out" \
    "$driver" --instructions "$v" "$epochs" >"$work/log" 2>&1 || { cat "$work/log" >&2; exit 2; }
  total="$(awk '/^totals:/ {print $2}' "$out")"
  per_step=$((total / steps))
  [[ -z "$plain" ]] && plain=$per_step
  awk -v v="$v" -v p="$per_step" -v b="$plain" 'BEGIN { printf "| %s | %d | %.4f |\n", v, p, p / b }'
done

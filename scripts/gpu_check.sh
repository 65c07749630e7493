#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU, a python3 whose torch is a CUDA build with
# LibTorch's headers and CMake config, CMake and ninja, but no Debian packages and no
# network. Builds hookforge against that LibTorch, runs the `cuda` tests, the default
# super-resolution run, the same run for one epoch under SyncAudit (--audit-syncs: which hook
# makes the host wait for the GPU) and a short GAN run on cuda, then times the training
# step with CUDA events (benchmarks/gpu_step.cpp: the plain LibTorch loop, TrainingEpochRunner
# and CudaGraphTrainingRunner with default_hooks; benchmarks/gpu_step.py: the same in plain
# PyTorch and Lightning), and writes a report; at most 8 minutes.
#
#   here:           ./scripts/gpu_deps.sh     (build-gpu-deps/: the Debian packages, extracted)
#   on the machine: ./scripts/gpu_check.sh [OUT]   (OUT: $OUT or gpu-report)
#
# Every step has its own time limit, so a hung step still leaves the report of the others.
# The exit code is that of the first failing step.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-report}}
mkdir -p "$out"
report=$out/report.md
python=${PYTHON:-python3}
deps=$PWD/build-gpu-deps/root
build=build-gpu
jobs=$(nproc)
status=0
start=$SECONDS

[ -d "$deps/usr/include/fmt" ] || { echo "gpu_check: no $deps (run scripts/gpu_deps.sh where apt works)" >&2; exit 2; }
torch_prefix=$("$python" -c 'import torch, os; print(os.path.dirname(torch.__file__))') ||
  { echo "gpu_check: $python has no torch" >&2; exit 2; }
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CPATH=$deps/usr/include${CPATH:+:$CPATH}

step() {  # step NAME LIMIT_S COMMAND...: runs it with a time limit, logs to OUT/NAME.log
  local name=$1 limit=$2 t0=$SECONDS rc
  shift 2
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  printf '| %s | %s | %d s |\n' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")" \
    $((SECONDS - t0)) >>"$report"
  [ $rc -ne 0 ] && [ $status -eq 0 ] && status=$rc
  return $rc
}

{
  echo "# hookforge GPU check"
  echo
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /'
  "$python" -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda, "devices", torch.cuda.device_count())'
  echo
  echo "| step | result | time |"
  echo "|---|---|---:|"
} >"$report" 2>&1

step configure 120 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_PREFIX_PATH=$torch_prefix;$deps/usr" -DHOOKFORGE_DISTRIBUTED_NCCL=ON \
  -DHOOKFORGE_BUILD_EXAMPLES=OFF -DHOOKFORGE_BUILD_BENCHMARKS=ON
step build 300 cmake --build "$build" -j "$jobs" --target hookforge_torch_tests hookforge-run \
  hookforge_gpu_step
step cuda-tests 120 ctest --test-dir "$build" -L cuda -j 4 --output-on-failure
step default-run 150 "$build/hookforge-run" --device cuda --output "$out/default"
step sync-audit 60 "$build/hookforge-run" --device cuda --output "$out/audit" --audit-syncs \
  --set trainer.params.epochs=1
step gan-run 60 "$build/hookforge-run" configs/gan_sr.yaml --device cuda --output "$out/gan" \
  --set trainer.params.epochs=1 --set data.train.params.count=256 --set data.val.params.count=64
step gpu-step 120 "$build/benchmarks/hookforge_gpu_step" --device cuda --rounds 10
step gpu-step-python 120 "$python" benchmarks/gpu_step.py --device cuda --rounds 10

{
  echo
  echo "cuda tests: $(grep -E 'tests passed|tests failed' "$out/cuda-tests.log" | tail -1)"
  echo
  echo "default run on cuda: $(grep '^final:' "$out/default-run.log" | tail -1)"
  echo
  echo "host synchronisations on cuda (--audit-syncs, one epoch):"
  echo
  sed -n '/^sync audit:/,/^final:/p' "$out/sync-audit.log" | grep -v '^final:' | sed 's/^/    /'
  echo
  echo "GAN run on cuda: $(tail -1 "$out/gan-run.log")"
  echo
  echo "the training step, timed with CUDA events (hookforge_gpu_step, then gpu_step.py):"
  grep -E '^(\||MLP|ESPCN|\()' "$out/gpu-step.log" "$out/gpu-step-python.log" | sed 's/^[^:]*://'
  echo
  echo "total: $((SECONDS - start)) s"
} >>"$report"
cat "$report"
exit $status

#!/usr/bin/env bash
# The one GPU test runner, from the repository root:
#
#   bash test/gpu/run.sh [--compile-only] [--subset] SUITE... [-- suite args]
#
# Suites (each runs its own script; `all` runs them all, in this order):
#   corpus            test/gpu/*.cu original and transformed (test/gpu/transform.sh, then run_on_gpu.sh)
#   runtime           the runtime's GPU tests and benchmarks (test/gpu/runtime/run_on_gpu.sh)
#   fusion            the fused pairs (test/fusion/transform.sh, then test/fusion/gpu_run.sh)
#   fusion-semantics  the fusions of test/fusion/semantics (transform.sh, then run_on_gpu.sh)
#   examples          the bundled examples (test/gpu/examples/transform.sh, then run_on_gpu.sh)
#   stress            the runtime's stress tests (test/gpu/stress/run_on_gpu.sh)
#   eigenvalues       NVIDIA's public eigenvalues sample, transformed, beside its original (test/gpu/eigenvalues.sh;
#                     its outputs in build/eigenvalues, carried to the GPU machine)
# The transforms run where the tools are built (BUILD, default build); elsewhere (the GPU machine) their
# outputs must have been carried. --compile-only (no GPU): builds and runs nothing on a GPU: corpus,
# fusion and fusion-semantics as their ctest checks do, runtime and stress with
# test/gpu/runtime/check_build.sh (it builds the stress programs too); examples has none (the ctest
# installed-package builds them every way). --subset: the fusion suite compiles CI's representative ratios
# (test/CMakeLists.txt, PTB_EXHAUSTIVE_CHECKS); without it, every ratio.
# Exit status: 0 when every suite passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
. test/gpu/lib.sh
COMPILE_ONLY=0 SUBSET="" SUITES=() ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --compile-only) COMPILE_ONLY=1 ;;
    --subset) SUBSET=--subset ;;
    --) shift; ARGS=("$@"); break ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d'; exit 0 ;;
    all) SUITES+=(corpus runtime fusion fusion-semantics examples stress eigenvalues) ;;
    corpus|runtime|fusion|fusion-semantics|examples|stress|eigenvalues) SUITES+=("$1") ;;
    *) echo "run.sh: unknown suite or option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ ${#SUITES[@]} -gt 0 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d'; exit 2; }
NVCC="$(ptb_nvcc)"
export NVCC
BUILD="${BUILD:-build}"

# transform SCRIPT ENVVAR TOOL ARGS...: runs SCRIPT when TOOL is built here, else expects its output carried.
transform() {
  local script=$1 var=$2 tool
  tool="$(ptb_tool "$3")"
  shift 3
  if [ -n "$tool" ]; then env "$var=$tool" bash "$script" "$@"
  else echo "run.sh: $BUILD/tools has no $var tool: using the carried outputs of $script"; fi
}
suite() {
  case "$1:$COMPILE_ONLY" in
    corpus:1) bash test/gpu/compile_check.sh "$BUILD" ;;
    corpus:0)  # a program the tool refuses shows as NOBUILD in the table
      transform test/gpu/transform.sh PTB_TRANSFORM ptb-transform || true
      bash test/gpu/run_on_gpu.sh ${ARGS[@]+"${ARGS[@]}"} ;;
    runtime:1|stress:1) bash test/gpu/runtime/check_build.sh ;;
    runtime:0) bash test/gpu/runtime/run_on_gpu.sh ${ARGS[@]+"${ARGS[@]}"} ;;
    stress:0) bash test/gpu/stress/run_on_gpu.sh ${ARGS[@]+"${ARGS[@]}"} ;;
    fusion:*)
      transform test/fusion/transform.sh FUSE_KERNELS fuse-kernels $SUBSET
      if [ $COMPILE_ONLY = 1 ]; then bash test/fusion/run_on_gpu.sh --compile-only
      else bash test/fusion/gpu_run.sh ${ARGS[@]+"${ARGS[@]}"}; fi ;;
    fusion-semantics:*)
      transform test/fusion/semantics/transform.sh FUSE_KERNELS fuse-kernels
      bash test/fusion/semantics/run_on_gpu.sh $([ $COMPILE_ONLY = 1 ] && echo --compile-only) ${ARGS[@]+"${ARGS[@]}"} ;;
    eigenvalues:1) echo "run.sh: eigenvalues: no compile-only run (ctest -R installed-package builds it every way)" ;;
    eigenvalues:0)
      if [ -n "$(ptb_tool ptb-transform)" ]; then bash test/gpu/eigenvalues.sh prepare "$BUILD/eigenvalues"
      else echo "run.sh: using the carried $BUILD/eigenvalues"; fi
      bash test/gpu/eigenvalues.sh run "$BUILD/eigenvalues" ;;
    examples:1) echo "run.sh: examples: no compile-only run (ctest -R installed-package builds them)" ;;
    examples:0)
      transform test/gpu/examples/transform.sh PTB_TRANSFORM ptb-transform
      bash test/gpu/examples/run_on_gpu.sh ;;
  esac
}
failed=()
for s in "${SUITES[@]}"; do
  echo "== run.sh: $s$([ $COMPILE_ONLY = 1 ] && echo ' (compile only)')"
  if (suite "$s"); then echo "== run.sh: $s passed"; else echo "== run.sh: $s FAILED"; failed+=("$s"); fi
done
[ ${#failed[@]} = 0 ] || { echo "run.sh: failed: ${failed[*]}"; exit 1; }
echo "run.sh: ${SUITES[*]}: passed"

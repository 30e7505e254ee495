#!/bin/bash
# No GPU needed: every runtime program compiles warning-free with nvcc, two translation units that
# include the runtime link into one program, and the host-only tests (SmSet, trace writers; the per-SM cap
# bytes of a policy whose cap applies on a subset) pass.
set -eu
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
FLAGS="-std=c++17 -arch=sm_90 -O3 -I runtime/include -Xcompiler -Wall,-Wextra -Werror all-warnings"
out=$(mktemp -d)
for f in test/gpu/runtime/test_basic.cu test/gpu/runtime/test_dispatch.cu test/gpu/runtime/test_policy.cu \
         test/gpu/runtime/test_qos_feedback.cu test/gpu/runtime/test_policy_subset.cu bench/runtime/bench_overhead.cu \
         bench/runtime/bench_policy.cu examples/colocate/colocate.cu test/gpu/stress/stress.cu \
         test/gpu/stress/wavefront.cu; do
  $NVCC $FLAGS -o "$out/$(basename "$f" .cu)" "$f"
  echo "ok $f"
done
# the loop-form probe, also with the runtime's debug stamps
$NVCC $FLAGS -o "$out/probe_forms" bench/ptb_overhead/probe_forms.cu
$NVCC $FLAGS -DPTB_DEBUG_STAMPS -o "$out/probe_forms_stamps" bench/ptb_overhead/probe_forms.cu
echo "ok bench/ptb_overhead/probe_forms.cu (and -DPTB_DEBUG_STAMPS)"
$NVCC $FLAGS -o "$out/probe_end" bench/ptb_overhead/probe_end.cu
echo "ok bench/ptb_overhead/probe_end.cu"
$NVCC $FLAGS -o "$out/multi_tu" test/gpu/runtime/multi_tu_a.cu test/gpu/runtime/multi_tu_b.cu
echo "ok multi-TU link"
$NVCC $FLAGS -o "$out/test_host" test/gpu/runtime/test_host.cu
(cd "$out" && ./test_host)
$NVCC $FLAGS -o "$out/test_caps_host" test/gpu/runtime/test_caps_host.cu
(cd "$out" && ./test_caps_host)
rm -rf "$out"

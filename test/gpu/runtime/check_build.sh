#!/bin/bash
# No GPU needed: every runtime program compiles warning-free with nvcc, two translation units that
# include the runtime link into one program, and the host-only tests (SmSet, trace writers, the hardware
# queues the runtime asks for; the per-SM cap bytes of a policy whose cap applies on a subset) pass.
# The builds are independent: they run in parallel (JOBS, default the number of cores), each into its own
# log, printed when it fails; then the two host-only tests run.
#   bash test/gpu/runtime/check_build.sh
set -eu
cd "$(dirname "$0")/../../.."
export NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
export FLAGS="-std=c++17 -arch=sm_90 -O3 -I runtime/include -Xcompiler -Wall,-Wextra -Werror all-warnings"
export out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# One line per program: its name, then what nvcc gets besides $FLAGS and -o. The longest builds first.
builds() {
  cat <<'EOF'
stress test/gpu/stress/stress.cu
wavefront test/gpu/stress/wavefront.cu
test_qos_feedback test/gpu/runtime/test_qos_feedback.cu
colocate examples/colocate/colocate.cu
test_basic test/gpu/runtime/test_basic.cu
test_dispatch test/gpu/runtime/test_dispatch.cu
test_request_gate test/gpu/runtime/test_request_gate.cu
test_policy test/gpu/runtime/test_policy.cu
test_policy_subset test/gpu/runtime/test_policy_subset.cu
test_controller_link test/gpu/runtime/test_controller_link.cu
test_short_launches test/gpu/runtime/test_short_launches.cu
test_early_setup test/gpu/runtime/test_early_setup.cu
test_link_devices test/gpu/runtime/test_link_devices.cu
bench_overhead bench/runtime/bench_overhead.cu
bench_policy bench/runtime/bench_policy.cu
probe_forms bench/ptb_overhead/probe_forms.cu
probe_forms_stamps -DPTB_DEBUG_STAMPS bench/ptb_overhead/probe_forms.cu
probe_end bench/ptb_overhead/probe_end.cu
multi_tu test/gpu/runtime/multi_tu_a.cu test/gpu/runtime/multi_tu_b.cu
test_host test/gpu/runtime/test_host.cu
test_caps_host test/gpu/runtime/test_caps_host.cu
EOF
}
# shellcheck disable=SC2016
builds | xargs -P "${JOBS:-$(nproc)}" -L 1 sh -c \
  'name=$1; shift; if "$NVCC" $FLAGS -o "$out/$name" "$@" > "$out/$name.log" 2>&1; then echo "ok $name: $*"; else cat "$out/$name.log"; echo "FAIL $name: $*"; exit 255; fi' sh
# the hardware queues the runtime asks for: none unconfined, 32 confined from the environment or linked to a
# controller (PTB_QOSD), the user's kept
(cd "$out" && env -u CUDA_DEVICE_MAX_CONNECTIONS -u PTB_SMS -u PTB_BLOCKS_PER_SM PTB_TEST_EXPECT_CONNECTIONS=unset ./test_host)
(cd "$out" && env -u CUDA_DEVICE_MAX_CONNECTIONS -u PTB_SMS -u PTB_BLOCKS_PER_SM PTB_QOSD=1 PTB_TEST_EXPECT_CONNECTIONS=32 ./test_host)
(cd "$out" && env -u CUDA_DEVICE_MAX_CONNECTIONS -u PTB_SMS -u PTB_BLOCKS_PER_SM PTB_QOSD=off PTB_TEST_EXPECT_CONNECTIONS=unset ./test_host)
(cd "$out" && env -u CUDA_DEVICE_MAX_CONNECTIONS -u PTB_BLOCKS_PER_SM PTB_SMS=0-65 PTB_TEST_EXPECT_CONNECTIONS=32 ./test_host)
(cd "$out" && env -u PTB_SMS PTB_BLOCKS_PER_SM=2 CUDA_DEVICE_MAX_CONNECTIONS=4 PTB_TEST_EXPECT_CONNECTIONS=4 ./test_host)
(cd "$out" && ./test_caps_host)

#!/usr/bin/env bash
# 2026-11-22, at d4e8dc9: the runtime's start-up variants of patches/start-variants-2bdd3fd.diff, timed with
# probe_forms.cu (forms dyn4, rt, rt_cc; two rounds). Run on the GPU machine from the repository root with the
# runtime of commit 2bdd3fd plus that patch in runtime/include (`git checkout 2bdd3fd -- runtime/include &&
# git apply bench/ptb_overhead/patches/start-variants-2bdd3fd.diff` on the development machine first).
# Variants: B none; R PTB_X_RUNNING0 (only worker 0 stores `running`, since adopted); N PTB_X_NOLOAD (the
# ramp's checks skip their loads: timing only, not correct under a policy); K PTB_X_K4 (the check ramp
# starts at 4 tasks).
set -u
OUT=${OUT:-out}
NV=${NV:-nvcc}
mkdir -p build-s3 "$OUT"
F="-O2 -arch=sm_90 -std=c++17 -I runtime/include"
$NV $F -o build-s3/pB bench/ptb_overhead/probe_forms.cu &
$NV $F -DPTB_X_RUNNING0 -o build-s3/pR bench/ptb_overhead/probe_forms.cu &
$NV $F -DPTB_X_NOLOAD -o build-s3/pN bench/ptb_overhead/probe_forms.cu &
$NV $F -DPTB_X_K4 -o build-s3/pK bench/ptb_overhead/probe_forms.cu &
wait
for rep in 1 2; do for v in B R N K; do PROBE_ONLY=dyn4,rt,rt_cc ./build-s3/p$v | grep PROBE | sed "s/PROBE /PROBE $v /"; done; done | tee "$OUT/x.txt"

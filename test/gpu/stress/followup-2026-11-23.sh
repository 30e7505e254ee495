#!/bin/bash
# Reproduces test/gpu/stress/results/h100-2026-11-23-run3.txt: the full stress run, launch_shapes_streams
# confined plainly and under racecheck with this runtime and the one before the fix (ed883fe), the three
# corpus programs that provoke API errors under memcheck --report-api-errors no, and a small stress run
# under each compute-sanitizer tool. Before carrying .device-carry to the GPU machine, on the development machine:
#   mkdir -p .device-carry/oldrt/ptb && for f in device fused host ptb smset trace; do
#     git show ed883fe:runtime/include/ptb/$f.cuh > .device-carry/oldrt/ptb/$f.cuh; done
# and bash test/gpu/transform.sh (build/gpu-transformed, carried too).
mkdir -p build-stress; F="-std=c++17 -arch=sm_90 -O2 -lineinfo"
T=build/gpu-transformed/launch_shapes_streams.cu
nvcc $F -I runtime/include test/gpu/stress/stress.cu -o build-stress/stress &
nvcc $F -I runtime/include -I test/gpu $T -o build-stress/lss_new &
nvcc $F -I .device-carry/oldrt -I test/gpu $T -o build-stress/lss_old &
for p in cuda_launch_kernel dynamic_shared_over_48k invalid_config_error; do nvcc $F -I runtime/include -I test/gpu build/gpu-transformed/$p.cu -o build-stress/$p & done
wait
S=/usr/local/cuda/bin/compute-sanitizer
echo "== stress, full run"; timeout -s KILL 300 build-stress/stress | grep -E "^FAIL|^stress" | cut -c1-300
echo "== launch_shapes_streams confined, plain x10 (new runtime)"
for i in $(seq 10); do PTB_SMS=0-65 PTB_BLOCKS_PER_SM=2 timeout 60 build-stress/lss_new | grep -E "^(PASS|FAIL)" | cut -c1-160; done | sort | uniq -c
for v in new old; do echo "== launch_shapes_streams racecheck x4 ($v runtime)"
  for i in 1 2 3 4; do PTB_SMS=0-65 PTB_BLOCKS_PER_SM=2 timeout 120 $S --tool racecheck build-stress/lss_$v 2>&1 | grep -E "^(PASS|FAIL)|SUMMARY" | cut -c1-160; done; done
echo "== memcheck --report-api-errors no"
for p in cuda_launch_kernel dynamic_shared_over_48k invalid_config_error; do PTB_SMS=0-65 PTB_BLOCKS_PER_SM=2 timeout 120 $S --report-api-errors no --error-exitcode 99 build-stress/$p 2>&1 | grep -E "^(PASS|FAIL)|SUMMARY"; echo "rc=$?"; done
for tool in memcheck racecheck synccheck; do echo "== stress under $tool"
  PTB_SMS=0-65 PTB_BLOCKS_PER_SM=2 timeout -s KILL 150 $S --tool $tool --error-exitcode 99 build-stress/stress --seed 42 --cases 8 --min-launches 0 --max-tasks 2000 --hang-seconds 120 2>&1 | grep -E "^(FAIL|stress)|SUMMARY" | cut -c1-200; done

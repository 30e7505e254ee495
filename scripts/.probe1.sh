set -u
mkdir -p $OUT
{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; ls /usr/local/cuda/lib64 | grep -i cupti; python3 -c "import torch,os; p=os.path.dirname(torch.__file__)+'/lib'; print(torch.__version__, torch.version.cuda); print([f for f in os.listdir(p) if 'cupti' in f])"; ldd $(python3 -c "import torch,os; print(os.path.dirname(torch.__file__)+'/lib/libtorch_cuda.so')") | grep -i cupti; which nvidia-cuda-mps-control g++; } 2>&1 | tee $OUT/env.txt
nvcc -std=c++17 -arch=sm_90 -O3 -I runtime/include -o /tmp/tcl test/gpu/runtime/test_controller_link.cu && timeout 120 /tmp/tcl 2>&1 | tee $OUT/tcl.txt
bash bench/colocate/run_on_gpu.sh --build-only /tmp/cb build/bench-colocate > $OUT/cbuild.txt 2>&1; tail -2 $OUT/cbuild.txt
# BE following with no controller: safe state (the highest quarter of the SMs)
PTB_QOSD=1 timeout 60 /tmp/cb/colocate --role be --be-kind compute --be-follow --settle 0.3 --secs 1 2>&1 | tail -4 | tee $OUT/follow.txt
timeout 60 /tmp/cb/colocate --role be --be-kind compute --settle 0.3 --secs 1 2>&1 | tail -2 | tee -a $OUT/follow.txt
timeout 60 /tmp/cb/colocate --role capacity 2>&1 | tail -1 | tee -a $OUT/follow.txt
timeout 120 python3 bench/colocate/ls_torch.py --capacity 2>&1 | tail -2 | tee $OUT/torch.txt
timeout 120 python3 bench/colocate/ls_torch.py --rate 300 --secs 2 2>&1 | tail -2 | tee -a $OUT/torch.txt

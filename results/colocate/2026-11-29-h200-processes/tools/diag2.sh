set -u
# .device-carry/ptb_ls_debug.cpp was runtime/ls/ptb_ls.cpp with ptb_ls_debug.patch applied (tree 298babc plus the tmpfs message).
mkdir -p $OUT
D=$(mktemp -d -p /dev/shm); export PTB_QOSD_DIR=$D
K=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 | tr -d ' ')
g++ -std=c++17 -O2 -I runtime/include .device-carry/ls_watch.cpp -o /tmp/w -lpthread
g++ -std=c++17 -shared -fPIC -O2 -fvisibility=hidden -I runtime/include -I runtime/ls -I /usr/local/cuda/include .device-carry/ptb_ls_debug.cpp -L /usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcupti -L /usr/local/cuda/lib64/stubs -lcuda -lpthread -o /tmp/libptb-ls.so || exit 1
/tmp/w $D/ptb-qos.$K 8 > /tmp/w.txt &
sleep 0.3
CUDA_INJECTION64_PATH=/tmp/libptb-ls.so PTB_LS_VERBOSE=1 python3 bench/colocate/ls_torch.py --rate 50 --secs 1 > $OUT/torch.txt 2>&1
wait; cat /tmp/w.txt >> $OUT/torch.txt
grep -c DBG $OUT/torch.txt; grep DBG $OUT/torch.txt | head -60; tail -3 $OUT/torch.txt

set -u
mkdir -p $OUT
D=$(mktemp -d -p /dev/shm); export PTB_QOSD_DIR=$D
K=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 | tr -d ' ')
g++ -std=c++17 -O2 -I runtime/include .device-carry/ls_watch.cpp -o /tmp/w -lpthread
g++ -std=c++17 -shared -fPIC -O2 -fvisibility=hidden -I runtime/include -I runtime/ls -I /usr/local/cuda/include runtime/ls/ptb_ls.cpp -L /usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcupti -L /usr/local/cuda/lib64/stubs -lcuda -lpthread -o /tmp/libptb-ls.so
for mode in graph graph-preload; do
  E=""; P=""; [ $mode = graph-preload ] && P=/usr/local/cuda/lib64/libcupti.so.13
  /tmp/w $D/ptb-qos.$K 9 > /tmp/w.$mode.txt &
  wp=$!
  sleep 0.3
  LD_PRELOAD=$P CUDA_INJECTION64_PATH=/tmp/libptb-ls.so PTB_LS_VERBOSE=1 python3 bench/colocate/ls_torch.py $E --rate 50 --secs 2 2>&1 | grep -v "^$" | sort | uniq -c | sort -rn | head -12
  wait $wp; echo "$mode: $(cat /tmp/w.$mode.txt)"
  rm -f $D/ptb-qos.$K
done 2>&1 | tee $OUT/diag.txt

set -u
mkdir -p $OUT
D=$(mktemp -d -p /dev/shm); E=$(mktemp -d -p /dev/shm)
g++ -std=c++17 -O2 -I runtime/include -I lib/Qosd .device-carry/ls_watch.cpp -o /tmp/w -lpthread 2>/dev/null
cmake -S . -B /tmp/nc -G Ninja -DPTB_COMPILER=OFF -DBUILD_TESTING=OFF > /tmp/nc.log 2>&1 && cmake --build /tmp/nc > /tmp/ncb.log 2>&1 || { tail /tmp/nc.log /tmp/ncb.log; exit 1; }
Q=/tmp/nc/tools/ptb-qosd/ptb-qosd; L=/tmp/nc/runtime/ls/libptb-ls.so
PTB_QOSD_DIR=$D $Q run --device 0 --policy off --mps off > /tmp/q.log 2>&1 &
sleep 1
for rep in 1 2; do
for mode in plain subscribed-no-segment marked; do
  case $mode in
    plain) env PTB_QOSD_DIR=$D python3 bench/colocate/ls_torch.py --rate 475 --secs 4 ;;
    subscribed-no-segment) env PTB_QOSD_DIR=$E CUDA_INJECTION64_PATH=$L python3 bench/colocate/ls_torch.py --rate 475 --secs 4 ;;
    marked) env PTB_QOSD_DIR=$D CUDA_INJECTION64_PATH=$L python3 bench/colocate/ls_torch.py --rate 475 --secs 4 ;;
  esac 2>&1 | grep TORCH | sed "s/^/$mode rep $rep: /"
done
done | tee $OUT/inject_cost.txt
PTB_QOSD_DIR=$D $Q status | tee -a $OUT/inject_cost.txt

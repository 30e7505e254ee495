# Does BE's use of the L2 between requests explain the LS median's rise beside memory and WMMA BE? The PyTorch
# service alone, with 1 MiB (L2 kept) or 256 MiB (L2 flushed) written after each request (ls_torch.py --flush-mb)
set -u
cd bench/colocate
nvidia-smi -L | head -1
P="python3 ls_torch.py --model resnet50"
for r in 1 2 3; do for f in 1 256; do echo "flush $f MiB: $($P --capacity --flush-mb $f)"; done; done
cap=$($P --capacity | awk '/^TORCH capacity/ {print $3}'); rate=$(python3 -c "print($cap / 2)")
echo "capacity $cap, rate $rate"
for f in 1 256 1 256; do echo "flush $f MiB at rate $rate: $($P --rate $rate --secs 12 --flush-mb $f)"; done

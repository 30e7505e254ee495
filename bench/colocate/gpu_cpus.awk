# The "CPU Affinity" of one GPU from `nvidia-smi topo -m` (columns apart by tabs or spaces; the header may carry
# terminal escapes):   nvidia-smi topo -m | awk -f gpu_cpus.awk -v gpu=GPU1     ->  16-31,48-63
# The header's names before "CPU Affinity" are one word each, and a row has its GPU's name first, so the value is
# the row's field one after the header's "CPU". Prints nothing when there is no such column, GPU or CPU list.
# processes.sh PIN=1; test/lit/bench/gpu-cpus.test.
{ gsub(/\033\[[0-9;]*m/, "") }
!col { for (i = 1; i < NF; i++) if ($i == "CPU" && $(i + 1) == "Affinity") col = i + 1; next }
$1 == gpu { if ($col ~ /^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$/) print $col; exit }

"""The quantile rule of bench/colocate's Python scripts (ls_torch.py, attribute.py): the nearest rank, the smallest
value with at least p of the values at or below it, as stats.h computes it for colocate's own client."""
import math


def quantile(values, p, empty=0.0):
    """The p-quantile of values by nearest rank; `empty` when there are none."""
    if not values:
        return empty
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(p * len(s)) - 1))]

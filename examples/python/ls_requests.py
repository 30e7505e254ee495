#!/usr/bin/env python3
"""Marks each request of a PyTorch model as one LS request for ptb-qosd (docs/reference/ptb-ls.md).

ptb_ls_begin() before the request's first launch, ptb_ls_end(stream) after its last: the GPU marks the
request done when the stream reaches that point. The library is loaded from PTB_LS_LIB, else from the
install prefix's lib/ (PTB_PREFIX, default /usr/local). Run it beside ptb-qosd, with or without
CUDA_INJECTION64_PATH=<the same libptb-ls.so> (which marks every launch as well):

    PTB_LS_LIB=/path/libptb-ls.so python3 examples/python/ls_requests.py [--requests N]
"""
import argparse
import ctypes
import os
import sys

import torch

NAMES = {0: "ok", 1: "no CUDA context", 2: "no controller for the GPU", 3: "every LS client slot taken",
         4: "no request open", 5: "the stream is capturing", 6: "the stream write failed"}


def load_library():
    path = os.environ.get("PTB_LS_LIB") or os.path.join(os.environ.get("PTB_PREFIX", "/usr/local"), "lib",
                                                         "libptb-ls.so")
    lib = ctypes.CDLL(path)
    lib.ptb_ls_begin.argtypes = []
    lib.ptb_ls_begin.restype = ctypes.c_int
    lib.ptb_ls_end.argtypes = [ctypes.c_void_p]
    lib.ptb_ls_end.restype = ctypes.c_int
    return lib


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("ls_requests: no CUDA device")

    lib = load_library()
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
    model.eval()
    x = torch.randn(args.batch, 1024, device="cuda")
    with torch.no_grad():
        model(x)  # creates the context and loads the kernels before the first request
    torch.cuda.synchronize()

    marked, said = 0, set()
    with torch.no_grad():
        for _ in range(args.requests):
            stream = torch.cuda.current_stream().cuda_stream  # an int: 0 for the default stream
            rc = lib.ptb_ls_begin()
            y = model(x)
            if rc == 0:
                rc = lib.ptb_ls_end(ctypes.c_void_p(stream))
            if rc == 0:
                marked += 1
            elif rc not in said:
                said.add(rc)
                print(f"ls_requests: request not marked: {NAMES.get(rc, rc)}", file=sys.stderr)
            y.sum().item()  # the request's answer, back on the host
    print(f"ls_requests: {args.requests} requests, {marked} marked")


if __name__ == "__main__":
    main()

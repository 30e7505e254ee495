# lit configuration of the tool tests. See lit.site.cfg.py.in for the values CMake provides.
import os
import sys

import lit.formats

config.name = "ptb-tools"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cu", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.ptb_obj_root

# FileCheck, not, count, split-file come from llvm-19-tools.
config.environment["PATH"] = os.pathsep.join([config.llvm_tools_dir, config.environment.get("PATH", "")])
for var in ("CUDA_PATH", "HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

tools = os.path.join(config.ptb_tools_dir)
config.substitutions.append(("%ptb-transform", os.path.join(tools, "ptb-transform", "ptb-transform")))
config.substitutions.append(("%fuse-kernels", os.path.join(tools, "fuse-kernels", "fuse-kernels")))
config.substitutions.append(("%ptb-nvcc", os.path.join(tools, "ptb-nvcc", "ptb-nvcc")))
config.substitutions.append(("%ptb-qosd", os.path.join(tools, "ptb-qosd", "ptb-qosd")))
# The outputs contain the input text, comments and all: drop the test's own RUN/CHECK lines before
# FileCheck reads an output, so that no CHECK line can match itself.
config.substitutions.append(("%strip-directives", r"sed -E '/\/\/ *(RUN|REQUIRES|[A-Z]+(-[A-Z]+)*):/d'"))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

if config.nvcc and os.path.exists(config.nvcc):
    config.available_features.add("nvcc")
    # nvcc itself, without the flags %nvcc adds (the launcher tests give their own).
    config.substitutions.append(("%cuda-nvcc", config.nvcc))
    config.substitutions.append(
        ("%nvcc", "%s -std=c++17 -arch=sm_90 -I %s" % (config.nvcc, config.runtime_include)))

# Tests that make device nodes (mknod) or give files away (chown) need root.
if hasattr(os, "geteuid") and os.geteuid() == 0:
    config.available_features.add("root")
config.substitutions.append(("%python", sys.executable))

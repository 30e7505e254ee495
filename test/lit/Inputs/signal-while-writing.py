"""Sends a signal to a tool while it writes its outputs, and prints what is left in the output directory.

usage: signal-while-writing.py SIGNAL DIR -- TOOL ARGS...

DIR must hold a FIFO named `fifo` that the tool writes one of its outputs to, and the tool's other
outputs must go to DIR. The tool stages its regular outputs as temporaries (.ptb-tmp-*) in DIR, then
blocks opening the FIFO (nobody reads it): the signal arrives while the temporaries exist. Prints
`status -<signal number>` (the tool died of the signal) and then the names left in DIR, sorted.
"""
import os
import signal
import subprocess
import sys
import time

sig = getattr(signal, sys.argv[1])
out_dir = sys.argv[2]
cmd = sys.argv[sys.argv.index("--") + 1:]
# The tool must see the signal as a user would: a shell's background job (lit, ctest) may have SIGINT
# ignored, and an ignored signal is inherited.
proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL,
                        preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGTERM)])
deadline = time.time() + 120
while time.time() < deadline and proc.poll() is None:
    if any(n.startswith(".ptb-tmp-") for n in os.listdir(out_dir)):
        break
    time.sleep(0.05)
else:
    proc.kill()
    sys.exit("the tool did not stage a temporary file in %s (exit status %s)" % (out_dir, proc.poll()))
time.sleep(0.5)  # let it finish the temporaries and block on the FIFO
proc.send_signal(sig)
try:
    status = proc.wait(timeout=60)
except subprocess.TimeoutExpired:
    proc.kill()
    proc.wait()
    sys.exit("the tool did not end after the signal")
print("status %d" % status)
for name in sorted(os.listdir(out_dir)):
    print(name)

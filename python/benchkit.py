"""What the benchmark scripts share: timing one whole process with its peak RSS."""
import os
import subprocess
import time


def timed(cmd):
    """(seconds, peak RSS in MiB) of one process.

    The peak comes from GNU time, which forks the command from its own small process: a child
    forked from the benchmark's Python process (holding its data) would count the parent's
    resident pages in its `ru_maxrss` before it execs.
    """
    report = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"sciio-bench-rss-{os.getpid()}")
    t = time.perf_counter()
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report] + cmd,
                   stdout=subprocess.DEVNULL, check=True)
    elapsed = time.perf_counter() - t
    with open(report) as f:
        peak_kib = int(f.read().split()[-1])
    os.remove(report)
    return elapsed, peak_kib / 1024

"""Run a command and print the CPU seconds it used: user + system of every process it started
and waited for (``resource.getrusage(RUSAGE_CHILDREN)``), beside its wall time.

    python scripts/cpu_time.py OUT -- CMD ...

writes ``{"wall_s": ..., "cpu_s": ..., "rc": ...}`` to the file OUT and exits with CMD's
status. scripts/test.sh uses it for the unit pass (its CPU budget is in CPU seconds, which a
loaded machine changes far less than wall time).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    out, cmd = argv[0], argv[2:]
    t0 = time.time()
    rc = subprocess.call(cmd)
    wall = time.time() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru.ru_utime + ru.ru_stime
    print(f"   cpu: {cpu:.0f} s (user {ru.ru_utime:.0f} + system {ru.ru_stime:.0f}, every "
          f"process) in {wall:.0f} s wall", flush=True)
    with open(out, "w") as f:
        json.dump({"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "rc": rc}, f)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

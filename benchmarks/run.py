"""Wall time and peak memory of every chapter, run as a whole process.

    python benchmarks/run.py [--scale smoke] [--repeats 3] [--chapters 00 03] [--kernels]

Each chapter runs as ``python book/NN_name.py`` in a fresh process (so imports count),
``--repeats`` times; the table shows the median wall time and the peak resident memory
(of the child process, from ``resource.getrusage``). ``--kernels`` also runs every
``benchmarks/bench_*.py --quick`` (each chapter's fast-vs-naive kernel comparison).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_once(path: Path, scale: str) -> tuple[float, float, int]:
    """Run one chapter; return (wall seconds, peak RSS of that process in MiB, exit code)."""
    env = {**os.environ, "DLTHEORY_SCALE": scale, "MPLBACKEND": "Agg"}
    env.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, str(path)], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)   # per-child rusage (Linux: ru_maxrss in KiB)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        if code != 0:
            err.seek(0)
            sys.stderr.write(err.read().decode(errors="replace")[-2000:])
    return wall, usage.ru_maxrss / 1024.0, code


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="smoke", choices=["smoke", "standard", "paper"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--chapters", nargs="*", help="chapter number prefixes, e.g. 00 03")
    ap.add_argument("--kernels", action="store_true", help="also run benchmarks/bench_*.py --quick")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")

    chapters = sorted(p for p in (ROOT / "book").glob("[0-9][0-9]_*.py"))
    if args.chapters:
        chapters = [p for p in chapters if p.name[:2] in args.chapters]
    print(f"scale={args.scale} repeats={args.repeats} python={sys.version.split()[0]}")
    print(f"{'chapter':32s} {'median s':>9s} {'min s':>8s} {'max s':>8s} {'peak MiB':>9s} status")
    failed = 0
    for path in chapters:
        walls, peaks, codes = [], [], []
        for _ in range(args.repeats):
            w, m, c = run_once(path, args.scale)
            walls.append(w)
            peaks.append(m)
            codes.append(c)
        ok = all(c == 0 for c in codes)
        failed += not ok
        print(f"{path.stem:32s} {statistics.median(walls):9.1f} {min(walls):8.1f} "
              f"{max(walls):8.1f} {max(peaks):9.0f} {'ok' if ok else 'FAILED'}")
    if args.kernels:
        for bench in sorted((ROOT / "benchmarks").glob("bench_*.py")):
            print(f"\n== {bench.name} --quick")
            rc = subprocess.call([sys.executable, str(bench), "--quick"], cwd=ROOT)
            failed += rc != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

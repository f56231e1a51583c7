"""Run one chapter as a script and record what it did in a sidecar JSON.

    python scripts/gpu_check_run.py book/00_gradient_flow.py _build/gpu/00_gradient_flow.json

The chapter runs in this process (``runpy``), so the sidecar can record, even when the run
is stopped by ``timeout`` (SIGTERM) or fails: status (ok | capped | claims failed | error),
wall seconds, peak GPU memory (``torch.cuda.max_memory_allocated``), peak host memory,
the device, ``dltheory.experiments.stats()`` (tasks computed vs loaded from the cache) and
the ledgers the chapter wrote. Exit status: 0 ok, 124 capped, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import resource
import runpy
import signal
import sys
import time
import traceback
from pathlib import Path


class Capped(BaseException):
    """Raised by the SIGTERM handler: the per-chapter time cap was reached."""


_TERMINATED: list[int] = []   # signals received: a library may wrap the Capped it raised


def _on_term(signum, frame):
    _TERMINATED.append(signum)
    raise Capped(f"stopped by signal {signum} (time cap)")


def main(chapter: str, sidecar: str) -> int:
    signal.signal(signal.SIGTERM, _on_term)
    os.environ.setdefault("MPLBACKEND", "Agg")
    t0 = time.perf_counter()
    ledgers: list[str] = []
    status, error, code = "ok", "", 0
    from dltheory.budget import Spent

    try:
        from dltheory import claims

        write = claims.Ledger.write

        def recording_write(self, *a, **k):
            path = write(self, *a, **k)
            ledgers.append(str(path))
            return path

        claims.Ledger.write = recording_write
        sys.argv = [chapter]
        runpy.run_path(chapter, run_name="__main__")
    except Capped as e:
        status, error, code = "capped", str(e), 124
    except Spent as e:
        # the chapter's budget ran out: the run ends with its ledger, the claims not
        # reached INCONCLUSIVE (chapter.stopped); a hard FAIL among those reached still fails
        from dltheory import chapter as chapter_mod

        spent = str(e)
        try:
            chapter_mod.stopped(e)
            status, error, code = "ok", f"ended early: {spent}", 0
        except BaseException as f:  # noqa: BLE001
            is_claims = type(f).__name__ == "ClaimFailed"
            status = "claims failed" if is_claims else "error"
            error, code = f"{type(f).__name__}: {f}", 1
    except KeyboardInterrupt:
        status, error, code = "capped", "interrupted", 124
    except SystemExit as e:
        if _TERMINATED:
            status, error, code = "capped", f"stopped by signal {_TERMINATED[0]} (time cap)", 124
        elif e.code not in (0, None):
            status, error, code = "error", f"SystemExit: {e.code}", 1
    except BaseException as e:  # noqa: BLE001 - the report names any failure
        if _TERMINATED:   # the cap's SIGTERM, re-raised as another error by the code it hit
            status, error, code = "capped", (f"stopped by signal {_TERMINATED[0]} (time cap), "
                                             f"surfacing as {type(e).__name__}"), 124
        else:
            is_claims = type(e).__name__ == "ClaimFailed"
            status = "claims failed" if is_claims else "error"
            error = f"{type(e).__name__}: {e}"
            code = 1
            if not is_claims:
                traceback.print_exc()
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        rec = {"chapter": Path(chapter).stem, "status": status, "exit": code, "error": error,
               "wall_s": round(time.perf_counter() - t0, 2), "ledgers": ledgers,
               "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
        rec.update(_device_record())
        try:
            from dltheory import experiments

            rec["tasks"] = experiments.stats()
        except Exception:  # noqa: BLE001
            rec["tasks"] = None
        Path(sidecar).parent.mkdir(parents=True, exist_ok=True)
        Path(sidecar).write_text(json.dumps(rec, indent=2) + "\n")
    return code


def _device_record() -> dict:
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return {"device": "cpu", "peak_gpu_mib": None}
    return {"device": torch.cuda.get_device_name(0),
            "peak_gpu_mib": round(torch.cuda.max_memory_allocated() / 2**20, 1)}


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: gpu_check_run.py CHAPTER.py SIDECAR.json")
    sys.exit(main(sys.argv[1], sys.argv[2]))

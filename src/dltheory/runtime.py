"""Scales, threads, device, seeding, the banner and notebook-or-script display.

Every chapter starts with ``rt = runtime.setup(SCALE)``. The scale comes from the
``DLTHEORY_SCALE`` environment variable (``smoke`` | ``standard`` | ``paper``); when it is
unset the default is ``smoke`` under CI (``CI`` set) and ``standard`` otherwise.

Nothing here runs at import time; ``setup`` is the only function with side effects on
process-wide state (thread counts, default dtype), and it says what it did in one line.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import validation
from .validation import as_generator  # noqa: F401  (one definition, re-exported)

SCALES = validation.SCALE_NAMES   # smoke | standard | paper | full
ENV_SCALE = "DLTHEORY_SCALE"
ENV_RESULTS = "DLTHEORY_RESULTS_DIR"
ENV_FIGURES = "DLTHEORY_FIG_DIR"
ENV_PROGRESS = "DLTHEORY_PROGRESS"
ENV_THREADS = "DLTHEORY_THREADS"
ENV_STATIC = "DLTHEORY_STATIC"      # set by the book build and the tests: no live widgets
COLAB_HINT = "Colab: Runtime -> Change runtime type -> GPU"
_T_IMPORT = time.perf_counter()   # wall times of chapters are measured from here


# --------------------------------------------------------------------------- scale
def scale(value: str | None = None) -> str:
    """Resolve the scale: ``value`` if given, else ``$DLTHEORY_SCALE``, else smoke/standard.

    Raises ``ValueError`` naming the valid scales for anything else.
    """
    if value is None:   # a chapter's parameters cell: check the whole environment first
        validation.check_environment()
        env = validation.env(ENV_SCALE)
        value = env if env is not None else ("smoke" if os.environ.get("CI") else "standard")
    value = str(value).strip().lower()
    if value not in SCALES:
        raise ValueError(
            f"unknown scale {value!r} (from argument or ${ENV_SCALE}); valid scales: {', '.join(SCALES)}"
        )
    return value


# --------------------------------------------------------------------------- threads/device
def set_threads(n: int) -> int:
    """Set torch intra-op threads and BLAS/OpenMP threads (threadpoolctl) to ``n``."""
    import torch
    from threadpoolctl import threadpool_limits

    if n < 1:
        raise ValueError(f"threads must be >= 1, got {n}")
    torch.set_num_threads(n)
    threadpool_limits(limits=n)
    return n


def default_threads(scale_name: str) -> int:
    """1 thread at smoke and on small machines (oversubscription makes small ops ~50x slower)."""
    cores = os.cpu_count() or 1
    if scale_name == "smoke" or cores <= 2:
        return 1
    return min(cores, 8)


def get_device(requested: str | None = None):
    """``None``/``"auto"``: cuda if available else cpu. An explicit ``"cuda"`` that is
    missing raises ``RuntimeError`` rather than silently running on the CPU."""
    import torch

    if requested is None or requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(requested)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            f"device {requested!r} was requested but torch sees no CUDA device "
            f"(torch {torch.__version__}). Use device='cpu' or 'auto'. {COLAB_HINT}."
        )
    return dev


# --------------------------------------------------------------------------- environment
def in_notebook() -> bool:
    """True inside a Jupyter kernel (book build, nbmake, Jupyter, Colab), False in a plain
    script or a terminal IPython. Colab's shell (``google.colab._shell.Shell``) subclasses
    ipykernel's ``ZMQInteractiveShell``, so the class hierarchy is checked, not the name."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    if ip is None:
        return False
    return any(c.__name__ == "ZMQInteractiveShell" for c in type(ip).__mro__)


def interactive() -> bool:
    """True where widgets can respond: a live Jupyter or Colab kernel. False in scripts, in
    the book build and in nbmake/CI (``$DLTHEORY_STATIC`` or ``$CI`` set), where a widget
    would render as dead markup."""
    if not in_notebook():
        return False
    if validation.env(ENV_STATIC, False) or os.environ.get("CI"):
        return False
    return True


def in_colab() -> bool:
    return "google.colab" in sys.modules


ENV_ROOT = "DLTHEORY_ROOT"
_SAID_ROOT: list[Path] = []   # the "not in a checkout" line is printed once per folder


def checkout_root() -> Path | None:
    """The checkout this package is imported from (``<root>/src/dltheory``, beside
    ``_config.yml``: an editable install or ``src`` on the path), else ``None`` (installed
    from a wheel or git, as in Colab). Found from the package's own location, never from
    the working directory."""
    pkg = Path(__file__).resolve().parent
    root = pkg.parents[1]
    if pkg.parent.name == "src" and (root / "_config.yml").is_file():
        return root
    return None


def installed_commit() -> str | None:
    """The git commit an installed copy was built from, as pip records it for
    ``pip install git+<repo>@<ref>`` (``direct_url.json``, PEP 610): what a Colab notebook's
    install cell installed. ``None`` for an editable or a local install."""
    import importlib.metadata
    import json

    try:
        text = importlib.metadata.distribution("dltheory").read_text("direct_url.json")
        commit = json.loads(text or "null")["vcs_info"]["commit_id"]
    except (importlib.metadata.PackageNotFoundError, KeyError, TypeError, ValueError):
        return None
    return commit if isinstance(commit, str) else None


def repo_root() -> Path:
    """Where outputs (``_build/``) go and book sources are looked up:

    1. ``$DLTHEORY_ROOT`` when set (an existing folder);
    2. else the checkout the package is imported from (:func:`checkout_root`), whatever the
       working directory: ``cd /tmp && python <checkout>/book/00_gradient_flow.py`` writes
       into ``<checkout>/_build/`` with the checkout's commit and source digests;
    3. else (an installed package, no checkout: Colab) the working directory, said once
       per folder in one line, since nothing else can name a place for the outputs."""
    env = validation.env(ENV_ROOT)
    if env is not None:
        return env.resolve()
    root = checkout_root()
    if root is not None:
        return root
    here = Path.cwd().resolve()
    if here not in _SAID_ROOT:
        _SAID_ROOT.append(here)
        print(f"dltheory: the package is installed, not in a checkout: outputs go under "
              f"{here / '_build'} (set ${ENV_ROOT} to choose another folder)", flush=True)
    return here


def results_dir() -> Path:
    """Where claim ledgers go: ``$DLTHEORY_RESULTS_DIR`` or ``<repo>/_build/claims``."""
    env = validation.env(ENV_RESULTS)
    return env if env is not None else repo_root() / "_build" / "claims"


def figures_dir(scale_name: str | None = None) -> Path:
    """Where scripts save figures: ``$DLTHEORY_FIG_DIR``, else
    ``<repo>/_build/figures/<scale>`` (one folder per scale, so a smoke run never
    overwrites a standard run's figures)."""
    env = validation.env(ENV_FIGURES)
    return env if env is not None else repo_root() / "_build" / "figures" / scale(scale_name)


def versions() -> dict[str, str]:
    """Versions of the interpreter and the numeric stack."""
    import scipy
    import torch

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
    }


# --------------------------------------------------------------------------- setup
@dataclass(frozen=True)
class Runtime:
    """What ``setup`` chose. ``device`` is a ``torch.device``."""

    scale: str
    device: Any
    threads: int
    dtype: str
    versions: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    tf32: bool = False

    @property
    def is_gpu(self) -> bool:
        return self.device.type == "cuda"

    def device_memory(self) -> int | None:
        """Total memory of the device in bytes (CUDA only; ``None`` on the CPU)."""
        if not self.is_gpu:
            return None
        import torch

        return int(torch.cuda.get_device_properties(self.device).total_memory)

    def banner(self) -> str:
        v = self.versions
        gpu = ""
        if self.is_gpu:
            import torch

            mem = self.device_memory() / 2**30
            gpu = f" ({torch.cuda.get_device_name(self.device)}, {mem:.0f} GiB)"
        tf32 = " (TF32 on)" if self.tf32 else ""
        return (
            f"dltheory | scale={self.scale} | device={self.device}{gpu} | threads={self.threads} "
            f"| dtype={self.dtype}{tf32} | python {v.get('python')} torch {v.get('torch')} "
            f"numpy {v.get('numpy')}"
        )

    def elapsed(self) -> float:
        return time.perf_counter() - self.started


def setup(
    scale_name: str | None = None,
    *,
    device: str | None = None,
    threads: int | None = None,
    dtype: str = "float64",
    tf32: bool = False,
    quiet: bool = False,
    config: Any = None,
) -> Runtime:
    """Configure the process for a chapter and print one banner line (on CUDA it names the
    device and its memory).

    - threads: torch + BLAS threads (default: ``$DLTHEORY_THREADS``, else 1 at smoke or on
      <= 2 cores; ``scripts/gpu_check.sh`` splits the cores between parallel chapters);
    - device: ``None``/"auto" picks cuda when present; "cuda" without one raises;
    - dtype: torch default dtype ("float64" for identities and exponent fits). GPU first:
      experiments that tolerate it name ``torch.float32`` in their Config and task code,
      since consumer GPUs run float64 at a small fraction of float32 speed;
    - tf32: allow TF32 matmuls on CUDA (off by default, so float32 matmuls are not
      silently downgraded; a chapter turns it on only where its tolerances allow);
    - config: the chapter's Config; its ``budget`` (seconds, from ``$DLTHEORY_BUDGET`` by
      default) and ``BUDGET_WEIGHTS`` start the chapter's time budget (``dltheory.budget``).

    Every ``DLTHEORY_*`` environment variable is checked first
    (``validation.check_environment``), so a bad value stops the chapter here, naming the
    variable and what is allowed; ``$DLTHEORY_MUTATION`` (calibration runs only) plants its
    error for the rest of the process.
    """
    import torch

    validation.check_environment()
    s = scale(scale_name)
    if threads is None:
        threads = validation.env(ENV_THREADS)
    n = threads if threads is not None else default_threads(s)
    set_threads(n)
    dev = get_device(device)
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    torch.set_default_dtype(getattr(torch, dtype))
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = bool(tf32)
        torch.backends.cudnn.allow_tf32 = bool(tf32)
    rt = Runtime(scale=s, device=dev, threads=n, dtype=dtype, versions=versions(),
                 tf32=bool(tf32) and dev.type == "cuda")
    _start_chapter(config, quiet)
    if not quiet:
        print(rt.banner())
        # a hint to a reader at a live Colab session; a static run (the book build, CI's
        # Colab-like kernel) makes a page, where it would only mislead
        static = validation.env(ENV_STATIC, False) or os.environ.get("CI")
        if dev.type == "cpu" and in_colab() and not static:
            print(f"No GPU in this runtime. {COLAB_HINT}.")
    return rt


def _start_chapter(config: Any, quiet: bool) -> None:
    """Start the chapter's budget (when a Config is given) and plant the error named by
    ``$DLTHEORY_MUTATION`` (calibration runs)."""
    if config is not None:
        from . import budget

        budget.start(getattr(config, "budget", None),
                     dict(getattr(config, "BUDGET_WEIGHTS", {}) or {}))
    if validation.env("DLTHEORY_MUTATION") is not None:
        from . import mutations

        mutations.activate_from_env()


# --------------------------------------------------------------------------- display
def show(fig=None, name: str | None = None) -> Path | None:
    """Show a matplotlib figure: inline in a notebook; saved as PNG in a script.

    In a notebook the figure is handed to ``IPython.display.display`` and closed, so it
    appears in the page whatever the matplotlib backend is (``MPLBACKEND=Agg`` exported on a
    headless machine included; ``plt.show()`` would show nothing there). In a script it is
    written atomically to ``figures_dir()/<name>.png`` (``_build/figures/<scale>/``; name
    defaults to ``figure``), its path printed relative to the repository root and returned.
    """
    import matplotlib.pyplot as plt

    from . import atomic

    fig = fig if fig is not None else plt.gcf()
    if in_notebook():
        from IPython.core.pylabtools import print_figure
        from IPython.display import Image
        from IPython.display import display as _display

        # the PNG the inline backend would make (bbox tight, the figure's dpi), rendered
        # here so that no backend setting can drop it
        png = print_figure(fig, "png", bbox_inches="tight")   # None: an empty figure
        if png:
            _display(Image(data=png, format="png"))
        plt.close(fig)       # else the inline backend would show it a second time
        return None
    out = figures_dir()
    stem = name or "figure"
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)
    path = out / f"{stem}.png"
    atomic.savefig(fig, path)
    plt.close(fig)
    try:
        shown = path.resolve().relative_to(repo_root().resolve())
    except ValueError:
        shown = path
    print(f"[figure] {shown}")
    return path


def display(obj: Any) -> None:
    """Show a table or object: rich HTML in a notebook, text in a script.

    DataFrames keep meaningful row labels (a named or non-integer index) and drop row
    numbers (an unnamed integer index, also after filtering); floats are shown to 4
    significant digits and missing values as an em dash. A pandas ``Styler``
    is shown as is in a notebook and as its data in a script.
    """
    import pandas as pd
    from pandas.io.formats.style import Styler as styler

    frame = getattr(obj, "plain_text", obj.data) if isinstance(obj, styler) else obj
    is_frame = isinstance(frame, pd.DataFrame)
    plain = is_frame and _default_index(frame)
    if in_notebook():
        from IPython.display import display as _display

        if isinstance(obj, styler):
            _display(obj)
        elif is_frame:
            sty = frame.style.format(precision=4, thousands=None, na_rep="—",
                                     formatter=_float_formatter(frame))
            sty = sty.set_table_styles([{"selector": "td, th",
                                         "props": "padding: 2px 8px; text-align: right;"}])
            _display(sty.hide(axis="index") if plain else sty)
        else:
            _display(obj)
    elif is_frame:
        with pd.option_context("display.float_format", "{:.4g}".format,
                               "display.max_colwidth", 80, "display.width", 120):
            print(frame.to_string(index=not plain, na_rep="—"))
    else:
        print(obj)


def _default_index(df) -> bool:
    import pandas as pd

    idx = df.index
    return (idx.name is None and not isinstance(idx, pd.MultiIndex)
            and pd.api.types.is_integer_dtype(idx.dtype))


def _float_formatter(df) -> dict:
    return {c: "{:.4g}" for c in df.columns if df[c].dtype.kind == "f"}


def wall_time() -> float:
    """Seconds since ``dltheory.runtime`` was first imported in this process."""
    return time.perf_counter() - _T_IMPORT


def progress_enabled() -> bool:
    """Progress bars: ``$DLTHEORY_PROGRESS`` decides when set (``1`` on, ``0`` off);
    otherwise on in a script on a terminal and in a live Jupyter/Colab kernel, off in the
    built book, in nbmake and in CI (``$DLTHEORY_STATIC`` or ``$CI``: clean pages and logs)."""
    env = validation.env(ENV_PROGRESS)
    if env is not None:
        return env
    if os.environ.get("CI") or validation.env(ENV_STATIC, False):
        return False
    if in_notebook():
        return interactive()
    return sys.stderr.isatty()


def progress(iterable: Iterable, **kwargs) -> Iterator:
    """``tqdm`` over ``iterable`` when progress is enabled (a widget in Jupyter, text in a
    terminal), else the iterable itself. ``kwargs`` go to tqdm (``desc``, ``total``...)."""
    if not progress_enabled():
        return iter(iterable)
    from tqdm.auto import tqdm

    return iter(tqdm(iterable, **kwargs))


def best_of(fn, repeats: int = 3) -> tuple[float, Any]:
    """Call ``fn()`` ``repeats`` times; return (fastest wall seconds, last result).
    The minimum is the usual benchmark statistic: noise only ever adds time."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


@contextlib.contextmanager
def timer(label: str, *, quiet: bool = False) -> Iterator[dict]:
    """``with timer("sweep") as t: ...``; afterwards ``t["s"]`` holds the wall seconds."""
    rec: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        yield rec
    finally:
        rec["s"] = time.perf_counter() - t0
        if not quiet:
            print(f"[time] {label}: {rec['s']:.2f} s")

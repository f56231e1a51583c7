"""Print the environment that makes this machine compute like a narrower CPU, for a second
pass of the unit tests (scripts/test.sh): a test that depends on the last bit of a float
fails here first instead of on a reader's machine (issue 45).

    eval "$(python scripts/other_simd.py)"      # exports, then a comment saying what

It switches off the widest SIMD level this machine has, in every library that dispatches
on it at run time:

- NumPy's own kernels: ``NPY_DISABLE_CPU_FEATURES`` names the dispatch targets of the
  widest level that are on (the AVX-512 family if present, else AVX2/FMA3; NEON/SVE
  levels likewise), read from ``numpy._core._multiarray_umath.__cpu_features__``;
- OpenBLAS (NumPy's and SciPy's ``linalg``): ``OPENBLAS_CORETYPE``, one kernel family down
  (Haswell under AVX-512, Sandybridge under AVX2);
- PyTorch: ``ATEN_CPU_CAPABILITY`` (its vectorised kernels) and ``MKL_ENABLE_INSTRUCTIONS``
  (its BLAS), one level down.

Nothing is printed for a library whose level is already the narrowest it knows.
"""

from __future__ import annotations

import shlex


def _cpu() -> tuple[dict, tuple]:
    try:
        from numpy._core import _multiarray_umath as m
    except ImportError:                          # NumPy 1.x
        from numpy.core import _multiarray_umath as m
    return dict(m.__cpu_features__), tuple(m.__cpu_dispatch__)


def _widest(features: dict, dispatch: tuple) -> list[str]:
    """The dispatch targets of the widest level that are on."""
    on = [d for d in dispatch if features.get(d)]
    wide = [d for d in on if d.startswith("AVX512") or d in ("X86_V4", "SVE", "SVE2")]
    if wide:
        return wide
    mid = [d for d in on if d in ("X86_V3", "AVX2", "FMA3", "AVX", "F16C", "ASIMDHP", "ASIMDDP",
                                  "ASIMDFHM")]
    return mid or on[-1:]


def environment() -> dict[str, str]:
    features, dispatch = _cpu()
    env = {}
    widest = _widest(features, dispatch)
    if widest:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(widest)
    if features.get("AVX512F"):
        env.update(OPENBLAS_CORETYPE="Haswell", ATEN_CPU_CAPABILITY="avx2",
                   MKL_ENABLE_INSTRUCTIONS="AVX2")
    elif features.get("AVX2"):
        env.update(OPENBLAS_CORETYPE="Sandybridge", ATEN_CPU_CAPABILITY="default",
                   MKL_ENABLE_INSTRUCTIONS="AVX")
    return env


def main() -> None:
    env = environment()
    for k, v in env.items():
        print(f"export {k}={shlex.quote(v)}")
    print(f"# {' '.join(f'{k}={v}' for k, v in env.items()) or 'no narrower level known'}")


if __name__ == "__main__":
    main()

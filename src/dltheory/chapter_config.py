"""The shared base of every chapter's ``Config``: presets, knobs, domain, random settings.

A chapter's Config is a frozen dataclass that *declares* its data and inherits the
behaviour::

    @dataclass(frozen=True)
    class Config(ChapterConfig):
        KNOBS = {"ALPHA1": Knob("alpha1", 0.25, 4.0, log=True),
                 "ALPHA2": Knob("alpha2", -4.0, 1.0)}
        PRESETS = {"smoke": {}, "standard": dict(n_seeds=4), "paper": dict(n_seeds=8)}
        CI_SETTINGS = [{"ALPHA1": 0.4, "ALPHA2": 0.6}]
        BUDGET_WEIGHTS = {"ss_alpha_n": 1.0, "ss_gd": 3.0}

        alpha1: float = 1.0
        alpha2: float = 0.0
        n_seeds: int = 3

        def validate(self):                       # joint constraints only
            if self.alpha2 < -self.alpha1: raise ValueError(...)

- ``Config.for_scale(scale, **overrides)``: the preset of ``scale`` with overrides given by
  field name or by the parameters-cell name of a knob (``ALPHA1=2.0``, ``SEED=3``); an
  unknown name is a ``ValueError`` naming it and listing the valid ones. Each value is
  checked against the field's type before the ranges are: a bool where a number goes, or a
  non-integral float (``SEED = 3.5``) where an integer goes, is a ``ValueError`` naming the
  parameter; an integral float (``K_FIXED = 10.0``) is converted to ``10``, an int for a float
  field to a float, NumPy scalars to Python numbers (so equal settings give equal configs
  and cache keys).
- ``unknown_parameters(namespace, Config)``: the UPPER_CASE names of a notebook namespace
  that are neither knobs nor reserved (``SEED``, ``SCALE``, ``BUDGET``): papermill injects a
  misspelt parameter (``K_FIXD = 3``) as a new variable, which the chapter must refuse. ``budget`` defaults to
  ``$DLTHEORY_BUDGET`` (seconds per chapter, or ``None``: the preset runs in full).
- Construction checks every knob against its declared range (``ValueError`` naming the knob,
  the range and the value), the scale, the seed and the budget, then calls ``validate()``.
- ``Config.domain()``, ``Config.sample_setting(rng)``, ``Config.corners()``,
  ``Config.edge_midpoints()``, ``Config.is_valid(setting)``: the declared domain for
  papermill reruns, the domain check and the calibration tool.
- ``cfg.replace(**kw)``, ``cfg.knobs``.

``budget`` and ``BUDGET_WEIGHTS`` never enter a sweep's cache key (``dltheory.experiments``
strips them), so a run with a larger budget reuses a smaller run's tasks.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from . import budget, runtime, validation

SEED_RANGE = (0, 100_000)
RESERVED = {"SEED": "seed", "SCALE": "scale", "BUDGET": "budget"}
_INT_TYPES = ("int",)
_FLOAT_TYPES = ("float", "float | None", "Optional[float]")


def _coerce(name: str, value: Any, kind: str | None) -> Any:
    """``value`` for a field of ``kind`` ("int", "float" or None: left as it is, bar NumPy
    scalars); ``ValueError`` naming ``name`` for a bool where a number goes or a fraction
    where an integer goes."""
    if isinstance(value, np.generic):
        value = value.item()
    if kind is None:
        return value
    if isinstance(value, bool):
        raise ValueError(f"{name} = {value!r}: a bool where {'an integer' if kind == 'int' else 'a number'} "
                         f"goes (write a number, e.g. {name} = {int(value)})")
    if kind == "int":
        if isinstance(value, float):
            if not (math.isfinite(value) and value.is_integer()):
                raise ValueError(f"{name} = {value!r}: an integer goes here")
            return int(value)
        return value
    if isinstance(value, int):
        return float(value)
    return value


def unknown_parameters(namespace: dict, config_cls: type, ignore=(), injected=()) -> list[str]:
    """The UPPER_CASE names in ``namespace`` (a notebook's ``globals()``), and the names
    papermill injected in any case (``injected``: ``validation.injected_parameters``; ``-p
    seed 3`` injects ``seed``), that are neither a knob of ``config_cls`` nor reserved
    (``SEED``, ``SCALE``, ``BUDGET``) nor in ``ignore``, sorted. Papermill writes every
    parameter it is given into the notebook as a new variable, so a misspelt one (``K_FIXD
    = 3``, ``seed = 3``) shows up here instead of silently running the defaults;
    ``chapter.start`` raises on a non-empty list (see ``check_parameters``)."""
    declared = set(getattr(config_cls, "KNOBS", {})) | set(RESERVED)
    upper = {k for k in namespace
             if isinstance(k, str) and k.isupper() and k[0].isalpha()
             and k.replace("_", "").isalnum() and k not in declared | set(ignore)}
    # an injected name is a parameter someone passed: only a declared one is allowed (a
    # notebook constant in ``ignore``, such as the install cell's SPEC, is none)
    return sorted(upper | {str(k) for k in injected if str(k) not in declared})


def check_parameters(namespace: dict, config_cls: type, ignore=(), injected=()) -> None:
    """``ValueError`` naming the unknown parameters of ``namespace`` (and of ``injected``)
    and the allowed ones; a name that is an allowed one in another case says which
    (``seed (did you mean SEED?)``)."""
    bad = unknown_parameters(namespace, config_cls, ignore, injected)
    if bad:
        names = [*RESERVED, *getattr(config_cls, "KNOBS", {})]
        upper = {n.upper(): n for n in names}
        shown = [f"{b} (did you mean {upper[b.upper()]}?)" if b.upper() in upper else b
                 for b in bad]
        raise ValueError(f"unknown parameter{'s' if len(bad) > 1 else ''} {', '.join(shown)} "
                         f"(a typo in a papermill -p?); allowed: {', '.join(names)}")


@dataclass(frozen=True)
class Knob:
    """A headline knob: the Config field it sets and its closed range ``[lo, hi]``.

    integer : the knob takes integers only; log : random settings draw it log-uniformly.
    """

    field: str
    lo: float
    hi: float
    integer: bool = False
    log: bool = False

    def check(self, name: str, value: Any, default: Any = None) -> float | int:
        """``value`` as an int or float if it is one and lies in the domain, else
        ``ValueError`` naming the knob and its range: "a number goes here" (or "an integer")
        for a value of another type, "outside its domain" for one out of range
        (``validation.parameter``; a suggested value, ``default`` where it fits, lies in
        the domain)."""
        return validation.parameter(name, value, self.lo, self.hi, integer=self.integer,
                                    default=default)

    def draw(self, rng: np.random.Generator) -> float | int:
        if self.integer:
            if self.log:
                v = math.exp(rng.uniform(math.log(self.lo), math.log(self.hi + 1)))
                return int(min(self.hi, math.floor(v)))
            return int(rng.integers(self.lo, self.hi + 1))
        if self.log:
            return _round(math.exp(rng.uniform(math.log(self.lo), math.log(self.hi))))
        return _round(rng.uniform(self.lo, self.hi))

    def midpoint(self) -> float | int:
        if self.integer:
            return int(round(math.sqrt(self.lo * self.hi))) if self.log else (self.lo + self.hi) // 2
        return _round(math.sqrt(self.lo * self.hi)) if self.log else _round((self.lo + self.hi) / 2)


def per_scale(**fields: tuple) -> dict[str, dict]:
    """Presets from per-field tuples (smoke, standard, paper[, full]):
    ``per_scale(n=(10, 100, 1000))`` -> ``{"smoke": {"n": 10}, "standard": {"n": 100},
    "paper": {"n": 1000}, "full": {"n": 1000}}`` (full defaults to the paper value)."""
    out: dict[str, dict] = {s: {} for s in runtime.SCALES}
    for k, v in fields.items():
        if not (isinstance(v, tuple) and len(v) in (3, 4)):
            raise ValueError(f"per_scale: {k} needs one value per scale {runtime.SCALES} "
                             f"(full may be left out: it takes the paper value), got {v!r}")
        for s, x in zip(runtime.SCALES, (*v, v[2])[:4], strict=True):
            out[s][k] = x
    return out


def _round(v: float) -> float:
    """Four significant digits: settings read well in reports and papermill commands."""
    return float(f"{v:.4g}")


@dataclass(frozen=True)
class ChapterConfig:
    """Base of the chapters' Configs (see the module docstring)."""

    KNOBS: ClassVar[dict[str, Knob]] = {}
    PRESETS: ClassVar[dict[str, dict]] = {"smoke": {}, "standard": {}, "paper": {}}
    CI_SETTINGS: ClassVar[list[dict]] = []
    BUDGET_WEIGHTS: ClassVar[dict[str, float]] = {}

    scale: str = "smoke"
    seed: int = 0
    budget: float | None = None

    # ------------------------------------------------------------------ construction
    def __post_init__(self):
        validation.choice("scale", self.scale, runtime.SCALES)
        object.__setattr__(self, "seed", validation.parameter(
            "SEED", self.seed, *SEED_RANGE, integer=True, default=0))
        if self.budget is not None:
            validation.real("budget (seconds)", self.budget, 0.0, math.inf, lo_open=True)
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        for name, knob in self.KNOBS.items():
            object.__setattr__(self, knob.field, knob.check(
                name, getattr(self, knob.field), default=defaults.get(knob.field)))
        self.validate()

    def validate(self) -> None:
        """Joint constraints and derived-size checks of a chapter (override; raise
        ``ValueError`` naming the knobs involved)."""

    @classmethod
    def field_for(cls, name: str) -> str:
        """The field a parameters-cell name or field name sets; ``ValueError`` if none."""
        if name in cls.KNOBS:
            return cls.KNOBS[name].field
        if name in RESERVED:
            return RESERVED[name]
        names = {f.name for f in dataclasses.fields(cls)}
        if name in names:
            return name
        raise ValueError(
            f"unknown {cls.__module__}.{cls.__qualname__} setting {name!r}; allowed "
            f"parameters: {', '.join([*RESERVED, *cls.KNOBS])}; fields: "
            f"{', '.join(sorted(names))}")

    @classmethod
    def _kind(cls, name: str, field: str) -> str | None:
        """"int", "float" or None (any other type) for the field ``name`` sets."""
        if name in cls.KNOBS:
            return "int" if cls.KNOBS[name].integer else "float"
        if field == "seed":
            return "int"
        if field == "scale":
            return None
        ann = {f.name: f.type for f in dataclasses.fields(cls)}.get(field)
        ann = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
        return "int" if ann in _INT_TYPES else "float" if ann in _FLOAT_TYPES else None

    @classmethod
    def _override(cls, name: str, value: Any) -> tuple[str, Any]:
        field = cls.field_for(name)
        if field == "seed" or field in {k.field for k in cls.KNOBS.values()}:
            return field, value   # checked (type, then range) when the Config is built
        return field, _coerce(name, value, cls._kind(name, field))

    @classmethod
    def for_scale(cls, scale: str | None = None, **overrides) -> ChapterConfig:
        """The preset of ``scale`` (smoke | standard | paper) with ``overrides`` on top."""
        s = runtime.scale(scale)
        over = dict(cls._override(k, v) for k, v in overrides.items())
        if "budget" not in over:
            over["budget"] = budget.from_env()
        return cls(**{**cls.preset(s), "scale": s, **over})

    @classmethod
    def preset(cls, scale: str) -> dict:
        """The preset's field values; ``full`` (the papers' own sizes, hours on a GPU) falls
        back to ``paper`` where a chapter declares none."""
        if scale == "full" and "full" not in cls.PRESETS:
            scale = "paper"
        return dict(cls.PRESETS.get(scale, {}))

    def replace(self, **kw) -> ChapterConfig:
        """A copy with fields (or knobs, by their parameters-cell names) changed."""
        return dataclasses.replace(self, **dict(self._override(k, v) for k, v in kw.items()))

    @property
    def knobs(self) -> dict[str, Any]:
        """The headline knobs by their parameters-cell names, SEED first."""
        return {"SEED": self.seed, **{n: getattr(self, k.field) for n, k in self.KNOBS.items()}}

    # ------------------------------------------------------------------ the domain
    @classmethod
    def domain(cls) -> dict[str, tuple]:
        """Declared ranges: parameters-cell name -> (lo, hi), SEED included."""
        return {"SEED": SEED_RANGE, **{n: (k.lo, k.hi) for n, k in cls.KNOBS.items()}}

    @classmethod
    def is_valid(cls, setting: dict, scale: str = "smoke") -> tuple[bool, str]:
        """(True, "") when ``for_scale(scale, **setting)`` builds, else (False, reason)."""
        try:
            cls.for_scale(scale, **setting)
        except ValueError as err:
            return False, str(err)
        return True, ""

    @classmethod
    def sample_setting(cls, rng: np.random.Generator, scale: str = "smoke",
                       max_tries: int = 10_000) -> dict:
        """A random valid setting (parameters-cell names, SEED included): each knob uniform
        on its range (log-uniform where declared ``log``), redrawn until the joint
        constraints of ``validate`` hold at ``scale``."""
        for _ in range(max_tries):
            s = {"SEED": int(rng.integers(SEED_RANGE[0], SEED_RANGE[1] + 1)),
                 **{n: k.draw(rng) for n, k in cls.KNOBS.items()}}
            if cls.is_valid(s, scale)[0]:
                return s
        raise RuntimeError(f"{cls.__qualname__}: no valid setting in {max_tries} draws")

    @classmethod
    def corners(cls, scale: str = "smoke") -> list[dict]:
        """Every corner of the knob box that satisfies the joint constraints."""
        return [p for where, p, ok, _ in cls.box(scale) if where == "corner" and ok]

    @classmethod
    def edge_midpoints(cls, scale: str = "smoke") -> list[dict]:
        """Valid midpoints of the box's edges: one knob at its (log-)midpoint, the others at
        an end."""
        return [p for where, p, ok, _ in cls.box(scale) if where == "edge" and ok]

    @classmethod
    def box(cls, scale: str = "smoke") -> list[tuple[str, dict, bool, str]]:
        """``(where, setting, valid, reason)`` for every corner ("corner"), then every edge
        midpoint ("edge") of the knob box, with ``is_valid``'s verdict at ``scale``."""
        names = list(cls.KNOBS)
        out = []
        for middle in (None, *names):
            ends_of = [n for n in names if n != middle]
            for ends in itertools.product((0, 1), repeat=len(ends_of)):
                s = {n: (cls.KNOBS[n].lo, cls.KNOBS[n].hi)[e]
                     for n, e in zip(ends_of, ends, strict=True)}
                if middle is not None:
                    s[middle] = cls.KNOBS[middle].midpoint()
                s = {n: s[n] for n in names}
                out.append(("corner" if middle is None else "edge", s, *cls.is_valid(s, scale)))
        return out

"""The Config split (fields in config.py, windows in windows.py, draw rules in rules.py) kept
every value: each field, derived window and rule output at smoke/standard/paper's defaults
equals the one recorded before the split (config_values.json)."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from dltheory.sparse_scaling.config import Config

RECORD = json.loads((Path(__file__).parent / "config_values.json").read_text())


def _norm(v):
    if isinstance(v, (tuple, list, np.ndarray)):
        return [_norm(x) for x in v]
    return v.item() if isinstance(v, np.generic) else v


@pytest.mark.parametrize("scale", ["smoke", "standard", "paper"])
def test_config_values_unchanged(scale):
    want = RECORD[f"{scale} {{}}"]
    c = Config.for_scale(scale, budget=None)
    got = {f.name: _norm(getattr(c, f.name)) for f in dataclasses.fields(c)}
    for key in want:
        if key in got:
            continue
        if "(" in key:
            name, arg = key[:-1].split("(")
            got[key] = _norm(getattr(c, name)(float(arg) if "." in arg or "e" in arg else int(arg)))
        else:
            got[key] = _norm(getattr(c, key))
    assert json.loads(json.dumps({k: got[k] for k in want}, sort_keys=True, default=str)) == want

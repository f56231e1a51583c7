"""pip's configuration as uv's: what ``scripts/setup.sh`` passes to ``uv pip install``.

    python scripts/pip_to_uv.py env    # KEY=VALUE words for ``env`` (certificate, timeout)
    python scripts/pip_to_uv.py args   # --index-url/--extra-index-url/--find-links/--constraint

Read from ``pip config list`` (files and ``PIP_*`` variables, as pip itself sees them), so
uv installs from the same wheels, indexes and constraints as pip would. uv's index strategy
is set to pip's (the best match over every index, not the first index that has a package).
"""

from __future__ import annotations

import shlex
import subprocess
import sys

FLAGS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url",
         "find-links": "--find-links", "constraint": "--constraint"}
ENV = {"cert": "SSL_CERT_FILE", "default-timeout": "UV_HTTP_TIMEOUT"}


def pip_config() -> dict[str, list[str]]:
    """Option -> values (a later source wins, as in pip: files, then ``PIP_*``)."""
    out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                         text=True, check=False).stdout
    opts: dict[str, list[str]] = {}
    for line in out.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        opts[key.rpartition(".")[2]] = shlex.split(value.strip().strip("'\""))
    return opts


def main(what: str) -> int:
    opts = pip_config()
    words: list[str] = []
    if what == "env":
        words = [f"{var}={opts[o][0]}" for o, var in ENV.items() if opts.get(o)]
        words.append("UV_INDEX_STRATEGY=unsafe-best-match")
    elif what == "args":
        for opt, flag in FLAGS.items():
            for v in opts.get(opt, []):
                words += [flag, v]
    else:
        print("usage: pip_to_uv.py env|args", file=sys.stderr)
        return 2
    print(" ".join(shlex.quote(w) for w in words))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ""))

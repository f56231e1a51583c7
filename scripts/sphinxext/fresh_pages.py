"""Sphinx extension: pages that are re-read (and so re-executed) on every build.

Sphinx re-reads only sources that changed, and MyST-NB serves unchanged notebooks from the
execution cache. The reproduction page reads the claims ledgers the chapters just wrote,
so it must run on every build: it asks MyST-NB for ``execution_mode: force`` in its own
metadata, and this extension marks it outdated each time. Sphinx reads outdated documents
in name order, so ``book/reproduction`` comes after the chapters ``book/0N_*``.
"""

FRESH = ("book/reproduction",)


def _outdated(app, env, added, changed, removed):
    return [d for d in FRESH if d in env.found_docs and d not in added | changed]


def setup(app):
    app.connect("env-get-outdated", _outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

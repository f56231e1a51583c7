"""dltheory: the shared implementations behind the executable deep-learning theory book.

Core modules: ``runtime`` (scales, threads, device, seeding, display), ``claims`` (the
claims ledger), ``fitting`` (power-law fits), ``plotting`` (the book's figure style),
``datasets`` (offline data and guarded real loaders). One subpackage per chapter.
Importing the package only defines names.
"""

__version__ = "0.1.0"

# The one place that says where Colab installs the package from (checked by a test).
# Notebooks install the release tag of this version (scripts/pair.py writes it into their
# first cell), so a saved notebook keeps getting the package its text was written for.
# Releasing: bump __version__ (and pyproject's version), run scripts/pair.py, commit, and
# tag that commit v<version>.
REPO_URL = "https://github.com/dltheory/dltheory"
BOOK_URL = "https://dltheory.github.io/dltheory/"   # the rendered book (links from notebooks)
INSTALL_SPEC = f"git+{REPO_URL}@v{__version__}"


def toolkit_getattr(package: str, modules: tuple[str, ...]):
    """A module ``__getattr__`` for ``package`` that finds a missing name in its submodules
    ``modules`` (imported on first use, in order; an absent one is skipped), so that a
    chapter subpackage serves its toolkit functions without importing them with the
    chapter's verdict-deciding code."""
    import importlib

    def __getattr__(name):
        for mod in modules:
            try:
                m = importlib.import_module(f"{package}.{mod}")
            except ModuleNotFoundError as e:
                if e.name != f"{package}.{mod}":
                    raise
                continue
            if hasattr(m, name):
                return getattr(m, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__

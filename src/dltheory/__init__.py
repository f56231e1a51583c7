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

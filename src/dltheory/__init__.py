"""dltheory: the shared implementations behind the executable deep-learning theory book.

Core modules: ``runtime`` (scales, threads, device, seeding, display), ``claims`` (the
claims ledger), ``fitting`` (power-law fits), ``plotting`` (the book's figure style),
``datasets`` (offline data and guarded real loaders). One subpackage per chapter.
Importing the package only defines names.
"""

__version__ = "0.1.0"

# The one place that says where Colab installs the package from (checked by a test).
REPO_URL = "https://github.com/dltheory/dltheory"
INSTALL_SPEC = f"git+{REPO_URL}@main"

"""Sphinx extension: the execution table's status in words, not emoji.

MyST-NB's ``{nb-exec-table}`` (the environment page) marks each executed document with the
emoji ✅ or ❌, which shows as an empty box where no emoji font is installed (a headless
browser, many Linux desktops). A post-transform that runs after MyST-NB has built the table
(its priority 8) writes ``ok`` and ``failed`` instead.
"""

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

WORDS = {"✅": "ok", "❌": "failed"}


def words_for_emoji(document) -> int:
    """Replace every text node of a table in ``document`` that is exactly one of ``WORDS``;
    returns how many were replaced."""
    n = 0
    for table in document.findall(nodes.table):
        for text in list(table.findall(nodes.Text)):
            word = WORDS.get(text.astext().strip())
            if word is not None:
                text.parent.replace(text, nodes.Text(word))
                n += 1
    return n


class ExecTableWords(SphinxPostTransform):
    default_priority = 9   # after MyST-NB's ExecutionStatsPostTransform (8)

    def run(self, **kwargs) -> None:
        words_for_emoji(self.document)


def setup(app):
    app.add_post_transform(ExecTableWords)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

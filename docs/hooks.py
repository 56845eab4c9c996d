"""MkDocs hook for the documentation site (``mkdocs.yml``, ``hooks``): full-size figure links.

The ``summary.md`` that ``banditlab run`` writes ends with its figure, ``![figure](figure.png)``.
The figures hold several panels, so at the width of the text column their labels are small: on
the site each such image becomes a link to the full-size file (styled by the ``figure-link``
class of ``docs/stylesheets/extra.css``). The Markdown files themselves are not changed.
"""

from __future__ import annotations

import re
from typing import Any

IMAGE = re.compile(r"^!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+\.(?:png|svg|jpe?g))\)[ \t]*$", flags=re.MULTILINE)


def link_figures(markdown: str) -> str:
    """Make every image that stands on a line of its own a link to the image itself.

    Parameters
    ----------
    markdown : str
        A page's Markdown source.

    Returns
    -------
    str
        The source with ``![alt](src)`` lines replaced by ``[![alt](src)](src){ .figure-link }``.
    """
    return IMAGE.sub(r"[![\g<alt>](\g<src>)](\g<src>){ .figure-link }", markdown)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """Link the figures of the reproduction pages (``docs/reproductions/``) to their full size."""
    if page.file.src_uri.startswith("reproductions/"):
        return link_figures(markdown)
    return markdown

"""Griffe extension for the documentation site: the reStructuredText in docstrings, as Markdown.

The docstrings of ``bandit_envs`` and ``agents`` are numpy style with a few reStructuredText
constructs that Markdown would show as they are. This extension (``mkdocs.yml``, mkdocstrings'
python handler ``extensions``) rewrites them in the docstrings it loads, not in the source files:

* an object role (``:func:`noise_generator```, ``:class:`~bandit_envs.datasets.Ratings```)
  becomes the object's name in code font, linked to its API page when the site documents it and
  left unlinked (with no warning) when it does not: an optional mkdocs-autorefs cross-reference.
  A ``~`` prefix shows the last part of the path only, as in Sphinx;
* a ``:math:`...``` role becomes the formula in code font, and a ``.. math::`` directive (with its
  indented continuation lines) a LaTeX code block: the site loads no math renderer, so formulas
  show as their LaTeX source;
* a ``.. [1]`` reference becomes a list item ``[1]``, and a citation ``[1]_`` the text ``[1]``.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

#: ``:role:`target``` or ``:py:role:`~target```, for the Python roles that name an object.
ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|obj|exc|const|type):`(?P<tilde>~?)(?P<target>[^`<>\"]+)`")


def _identifier(obj: griffe.Object, target: str) -> str:
    """The full path of ``target`` as seen from ``obj`` (its members, its module's names), else ``target``."""
    if "." in target and not target.startswith("."):
        return target
    try:
        return obj.resolve(target.lstrip("."))
    except (griffe.NameResolutionError, KeyError, ValueError, AttributeError):
        return target.lstrip(".")


#: ``:math:`formula```.
MATH_ROLE = re.compile(r":math:`(?P<formula>[^`]+)`")
#: ``.. math:: formula`` and the lines after it indented deeper than the directive.
MATH_BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<first>.*)\n(?P<rest>(?:(?P=indent)[ \t]+\S.*(?:\n|$))*)", re.M
)
#: ``.. [label] text`` (a numpydoc reference) and ``[label]_`` (a citation of it).
REFERENCE = re.compile(r"^(?P<indent>[ \t]*)\.\. \[(?P<label>[^\]\s]+)\][ \t]+", re.M)
CITATION = re.compile(r"\[(?P<label>[A-Za-z0-9]+)\]_")


def _math_block(match: re.Match[str]) -> str:
    indent = match["indent"]
    lines = [match["first"].strip(), *(line.strip() for line in match["rest"].splitlines())]
    body = "\n".join(f"{indent}{line}" for line in lines if line)
    return f"{indent}```latex\n{body}\n{indent}```\n"


def rewrite(obj: griffe.Object, text: str) -> str:
    """``text`` with the reStructuredText constructs above replaced by their Markdown."""
    text = MATH_BLOCK.sub(_math_block, text)
    text = MATH_ROLE.sub(lambda match: f"`{match['formula']}`", text)
    # Escaped brackets: "[1] [R]" would otherwise read as a Markdown reference link.
    text = REFERENCE.sub(lambda match: f"{match['indent']}- \\[{match['label']}\\] ", text)
    text = CITATION.sub(lambda match: f"\\[{match['label']}\\]", text)

    def replace(match: re.Match[str]) -> str:
        target = match["target"].strip()
        shown = target.rsplit(".", 1)[-1] if match["tilde"] else target
        identifier = html.escape(_identifier(obj, target), quote=True)
        return f'<autoref optional identifier="{identifier}"><code>{html.escape(shown)}</code></autoref>'

    return ROLE.sub(replace, text)


class SphinxRoles(griffe.Extension):
    """Rewrite every docstring once the object tree is complete."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Rewrite ``obj``'s own docstring (aliases share their target's)."""
        if obj.is_alias or obj.docstring is None:
            return
        obj.docstring.value = rewrite(obj, obj.docstring.value)

"""The leaderboard page of ``banditlab score --leaderboard``, replaced only while it is as banditlab wrote it.

The page (``--page``, default ``docs/leaderboard.md``) has its two figures, ``figure.png`` and
``regret.png``, in the folder of the same name without ``.md``. Its first line is a stamp, an HTML
comment that the rendered page does not show, holding the sha256 of the rest of the page and of
each figure::

    <!-- written by banditlab score --leaderboard; sha256 page=<hex> figure.png=<hex> regret.png=<hex> -->

The rule, as for an output folder (:mod:`agents.experiments.core.outputs`): a page or figure
someone else wrote, or that has been edited since banditlab wrote it, is never replaced. The
command checks the page before it scores anything (:func:`check_page`, one sentence naming the
file) and again just before it writes. A page that does not exist yet is written, with its
folder; figures already there without a stamped page are refused, since nothing says whose they
are. Each file is written to a new scratch file beside it and renamed into place, and no file
is written through a link.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from agents.experiments.core.outputs import OutputError, check_folder_path, create_exclusive, sha256_of

#: The figures beside the page, in the folder named like the page without ``.md``.
FIGURES = ("figure.png", "regret.png")
STAMP_START = "<!-- written by banditlab score --leaderboard; sha256 "
STAMP_END = " -->"
_AWAY = "move it away or choose another --page"


def figures_folder(page: Path) -> Path:
    """The folder of the page's figures: the page's path without ``.md``."""
    return page.with_suffix("")


def stamp(body: str, figures: dict[str, str]) -> str:
    """The stamp line for a page whose text after it is ``body`` and whose figures have the sha256 ``figures``."""
    hashes = " ".join([f"page={_sha(body)}", *(f"{name}={figures[name]}" for name in FIGURES)])
    return f"{STAMP_START}{hashes}{STAMP_END}"


def recorded_hashes(text: str) -> dict[str, str] | None:
    """The hashes a stamped page records (``page`` and each figure), or None if ``text`` has no stamp."""
    first, _, _ = text.partition("\n")
    if not (first.startswith(STAMP_START) and first.endswith(STAMP_END)):
        return None
    pairs = [item.partition("=") for item in first[len(STAMP_START) : -len(STAMP_END)].split()]
    return {name: value for name, sep, value in pairs if sep}


def check_page(page: Path) -> None:
    """OutputError (one sentence) unless banditlab may write ``page`` and its figures.

    Allowed: a ``.md`` page that does not exist (and no figure where its figures go), or one
    whose stamp matches its text and every figure present (see the module docstring).
    """
    if page.suffix != ".md":
        raise OutputError(f"--page must be a Markdown file whose name ends in .md, got {str(page)!r}.")
    check_folder_path(page.parent, "--page's folder", "choose another --page")
    folder = figures_folder(page)
    for path, kind in ((page, "file"), (folder, "folder")):
        if path.is_symlink() or (path.exists() and not (path.is_file() if kind == "file" else path.is_dir())):
            what = "a link" if path.is_symlink() else f"not a {kind}"
            raise OutputError(f"{path} is {what}, so banditlab does not write its leaderboard there; {_AWAY}.")
    recorded: dict[str, str] = {}
    if page.exists():
        try:
            text = page.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise OutputError(
                f"--page {page} cannot be read ({type(exc).__name__}), so it is not replaced; {_AWAY}."
            ) from None
        found = recorded_hashes(text)
        if found is None or found.get("page") != _sha(text.partition("\n")[2]):
            raise OutputError(
                f"--page {page} was not written by banditlab score --leaderboard, or has been edited since, so it is "
                f"not replaced; {_AWAY}."
            )
        recorded = found
    for name in FIGURES:
        path = folder / name
        if not (path.exists() or path.is_symlink()):
            continue
        if path.is_symlink() or not path.is_file() or sha256_of(path) != recorded.get(name):
            raise OutputError(
                f"{path} was not written by banditlab score --leaderboard for --page {page}, or has been edited "
                f"since, so it is not replaced; {_AWAY}."
            )


def write_page_files(page: Path, body: str, figures: dict[str, Path]) -> None:
    """Write the page (stamp, then ``body``) and copy ``figures`` (name -> source) beside it, checked first.

    Raises OutputError (:func:`check_page`) if the page or a figure is not banditlab's to replace.
    """
    check_page(page)
    folder = figures_folder(page)
    folder.mkdir(parents=True, exist_ok=True)
    for name in FIGURES:
        with open(figures[name], "rb") as source:
            _replace(folder / name, functools.partial(shutil.copyfileobj, source))
    hashes = {name: sha256_of(folder / name) for name in FIGURES}
    data = (stamp(body, hashes) + "\n" + body).encode("utf-8")
    _replace(page, lambda f: f.write(data))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _replace(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a new scratch file beside ``path`` with ``write(f)`` and rename it onto ``path``."""
    while True:
        scratch = path.with_name(f".{path.name}.banditlab-tmp-{secrets.token_hex(6)}")
        try:
            fd = create_exclusive(scratch)
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
        break
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(OSError):
            scratch.unlink()
        raise

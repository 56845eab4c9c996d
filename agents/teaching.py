"""Helpers shared by the teaching exercises (``examples/teach_*.py``).

Each exercise runs both as a script (``python examples/teach_01_first_bandit.py --out DIR``: its figures
are written to files and their paths printed) and as a Jupyter notebook (its figures are shown inline
under the cell that draws them). These helpers hold what the nine exercises share: telling the two
apart, the ``--out`` option, and showing or saving a figure.

Where the files go. Without ``--out`` a script writes into a folder of this user's in the system's
temporary folder (:data:`DEFAULT_OUT`). That folder is shared by every user of the machine and the
name is predictable, so another user may have taken it first: a folder there that is a link, belongs
to someone else or that others may write to could hold a link under a figure's name, and writing the
figure would overwrite the file it points to. :func:`output_folder` therefore creates the folders it
makes in the temporary folder readable by their owner only, and refuses, in one sentence, a folder
there that is a link, is another user's or is writable by others.
"""

from __future__ import annotations

import argparse
import io
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from bandit_envs.validation import PATH_SHOWN, not_a_file, shorten, summarize, user_path

__all__ = ["in_notebook", "out_folder", "output_folder", "show", "show_file", "temp_folder"]


def _plain_name(argument: str, value: Any, what: str) -> str:
    """``value`` if it is a plain file or folder name: a non-empty ``str``, no path separator, not ``.``/``..``."""
    if not isinstance(value, str):
        raise TypeError(f"{argument} must be a {what} (a str), got {summarize(value)} ({type(value).__name__}).")
    separators = {"/", os.sep, os.altsep or "/"}
    if value in {"", ".", ".."} or "\0" in value or any(sep in value for sep in separators):
        raise ValueError(
            f"{argument} must be a plain {what}, not empty, '.' or '..' and without a path separator or NUL, "
            f"got {summarize(value)}."
        )
    return value


def temp_folder(name: str) -> Path:
    """The folder ``name``, followed by the user's id where there is one, in the system's temporary folder.

    The temporary folder is shared by every user of a machine: a folder of a fixed name that one
    user created cannot be written by the next (``PermissionError``), so each user has a name of
    their own. The name is predictable, so it may still have been taken by another user first:
    :func:`output_folder` (which :func:`show` calls) checks that the folder is this user's before
    writing into it. This function only builds the path; it creates nothing.

    Parameters
    ----------
    name : str
        The folder's name, e.g. ``"bandit-envs-teaching"``: not empty, without a path separator.

    Returns
    -------
    Path
        ``<temp>/<name>-<uid>`` (``<temp>/<name>`` where the system has no user ids).

    Raises
    ------
    TypeError
        If ``name`` is not a ``str``.
    ValueError
        If ``name`` is empty, ``"."`` or ``".."``, or holds a path separator or NUL (it would name a
        folder elsewhere).
    """
    name = _plain_name("name", name, "folder name")
    uid = os.getuid() if hasattr(os, "getuid") else None
    return Path(tempfile.gettempdir()) / (name if uid is None else f"{name}-{uid}")


#: Where the figures of a script go without ``--out``: a folder of this user's in the temporary folder.
DEFAULT_OUT = temp_folder("bandit-envs-teaching")


def in_notebook() -> bool:
    """Whether the code runs in a Jupyter kernel (a notebook), not as a script.

    Returns
    -------
    bool
        True when an IPython shell with a kernel is running: importing ``ipykernel`` alone (as a test
        process may) does not count.
    """
    ipython = sys.modules.get("IPython")
    if ipython is None or "ipykernel" not in sys.modules:
        return False
    shell = ipython.get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _folder_path(argument: str, value: Any) -> Path:
    """``value`` as a path, ``~`` expanded (:func:`bandit_envs.validation.user_path`); a clear error if it is none."""
    if not isinstance(value, str | os.PathLike):
        raise TypeError(
            f"{argument} must be a folder path (a str or os.PathLike such as pathlib.Path), "
            f"got {summarize(value)} ({type(value).__name__})."
        )
    text = os.fspath(value)
    if not isinstance(text, str):
        raise TypeError(f"{argument} must be a folder path given as text, got {summarize(value)} (a bytes path).")
    if not text or "\0" in text:
        raise ValueError(f"{argument} must name a folder, got {summarize(text)}.")
    return user_path(text)


def _temp_roots() -> tuple[Path, Path]:
    """The system's temporary folder as given and with its links resolved (``/tmp`` is a link on some systems)."""
    temp = tempfile.gettempdir()
    return Path(os.path.abspath(temp)), Path(os.path.realpath(temp))


def _in_shared_temp(path: Path) -> list[Path]:
    """The folders from the temporary folder down to ``path`` (outermost first); empty if ``path`` is not inside it.

    ``path`` the temporary folder itself gives ``[path]``: writing straight into a folder everyone may write
    to is refused too.
    """
    absolute = Path(os.path.abspath(path))
    for root in _temp_roots():
        if absolute == root:
            return [root]
        if root in absolute.parents:
            parts = absolute.relative_to(root).parts
            return [root.joinpath(*parts[: i + 1]) for i in range(len(parts))]
    return []


def _check_own(folder: Path) -> None:
    """Raise PermissionError unless ``folder`` is a real folder of this user's that no other user may write to."""
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        why = f"is a link (to {os.readlink(folder)})"
    elif not stat.S_ISDIR(info.st_mode):
        why = "is a file, not a folder"
    elif info.st_uid != os.getuid():
        why = f"belongs to another user (uid {info.st_uid})"
    elif info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        why = f"may be written by other users (mode {stat.filemode(info.st_mode)})"
    else:
        return
    if folder in _temp_roots():
        where, remedy = "is the temporary folder", "Choose another folder with --out DIR."
    else:
        where, remedy = (
            "is in the temporary folder",
            "Remove it if it is yours, or choose another folder with --out DIR.",
        )
    raise PermissionError(
        f"{folder} {why} and {where} every user of this machine shares: writing there could follow a link "
        f"another user made and overwrite a file of yours. {remedy}"
    )


def output_folder(out: str | os.PathLike[str]) -> Path:
    """The folder ``out``, created if missing, ready for an exercise's files.

    A leading ``~`` is expanded to the home folder, as a shell would (``--out=~/figures``). Inside the
    system's temporary folder, which every user shares, each folder from the temporary folder down
    to ``out`` is created readable by its owner only, and a folder there that is a link, belongs
    to another user or may be written by others is refused (see the module docstring).

    Parameters
    ----------
    out : str or os.PathLike
        The folder, e.g. the script's ``--out`` (see `out_folder`).

    Returns
    -------
    Path
        The folder, which exists.

    Raises
    ------
    TypeError
        If ``out`` is not a ``str`` or ``os.PathLike`` of text.
    ValueError
        If ``out`` is empty, is a file, or cannot be created (the reason is given).
    PermissionError
        If a folder of ``out`` inside the temporary folder is a link, another user's or writable by
        others.
    """
    path = _folder_path("out", out)
    shown = repr(shorten(str(path), PATH_SHOWN))
    if path.exists() and not path.is_dir():
        raise ValueError(f"out {shown} is a file, not a folder; choose a folder (--out DIR).")
    shared = _in_shared_temp(path) if hasattr(os, "getuid") else []
    for folder in shared or [path]:
        try:
            if shared:
                folder.mkdir(mode=0o700, exist_ok=True)
            else:
                folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError:  # a file or a dangling link of that name: said below, or here
            if not shared:
                raise ValueError(f"out {shown} cannot be created (a file or a broken link has that name).") from None
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise ValueError(f"out {shown} cannot be created ({reason}); choose another folder (--out DIR).") from None
        if shared:
            _check_own(folder)
    return path


def _out_option(text: str) -> Path:
    """The ``--out`` option's value as a path (``~`` expanded); an argparse error if it names no folder."""
    try:
        path = _folder_path("--out", text)
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{shorten(str(path), PATH_SHOWN)!r} is a file, not a folder")
    return path


def out_folder(description: str) -> Path:
    """The folder an exercise writes its files to: the script's ``--out DIR`` option.

    Parameters
    ----------
    description : str
        The exercise's one-line description, shown by ``--help``.

    Returns
    -------
    Path
        ``--out`` as given (a leading ``~`` expanded), or this user's ``bandit-envs-teaching`` folder
        in the temporary folder (:data:`DEFAULT_OUT`). In a notebook the kernel's own command line
        (``-f connection-file``) is skipped and the default is returned. Nothing is created here:
        :func:`show` creates the folder when it writes the first figure. An ``--out`` that is a file
        ends the script with argparse's usage error.

    Raises
    ------
    TypeError
        If ``description`` is not a ``str``.
    """
    if not isinstance(description, str):
        raise TypeError(f"description must be a str, got {summarize(description)} ({type(description).__name__}).")
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--out", type=_out_option, default=DEFAULT_OUT, help=f"folder for the figures (default: {DEFAULT_OUT})"
    )
    args = parser.parse_known_args()[0] if in_notebook() else parser.parse_args()
    return Path(args.out)


def _figure_name(fig: Any, name: Any) -> str:
    """``name`` if it is a plain file name whose extension matplotlib writes for ``fig``."""
    name = _plain_name("name", name, "file name")
    formats = fig.canvas.get_supported_filetypes()
    if Path(name).suffix.lstrip(".").lower() not in formats:
        raise ValueError(
            f"name must be a file name ending in an extension matplotlib writes ({', '.join(sorted(formats))}), "
            f"got {summarize(name)}."
        )
    return name


def show(fig: Any, out: str | os.PathLike[str], name: str) -> Path | None:
    """Show a matplotlib figure inline in a notebook, or save it as ``out / name`` and print its path.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (with a canvas, e.g. ``FigureCanvasAgg(fig)``).
    out : str or os.PathLike
        The script's output folder (see `out_folder`); created if missing and checked by
        :func:`output_folder`. Unused in a notebook (but its type is checked).
    name : str
        The file name, e.g. ``"teach_01_first_bandit.png"``: a plain name (no folder) whose extension
        names a format matplotlib writes, so that the file written is the one printed.

    Returns
    -------
    Path or None
        The file written, or None in a notebook (nothing is written there).

    Raises
    ------
    TypeError
        If ``fig`` is not a matplotlib ``Figure``, ``out`` not a path or ``name`` not a ``str``.
    ValueError
        If ``name`` has a folder part or an extension matplotlib does not write, or ``out`` cannot
        be a folder (see :func:`output_folder`, which may also raise ``PermissionError``).
    """
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {summarize(fig)} ({type(fig).__name__}).")
    name = _figure_name(fig, name)
    folder = _folder_path("out", out)
    if in_notebook():
        from IPython.display import Image, display

        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=120, bbox_inches="tight")
        display(Image(data=png.getvalue(), format="png"))
        return None
    path = output_folder(folder) / name
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print(f"figure: {path}")
    return path


def show_file(path: str | os.PathLike[str]) -> None:
    """Show an image file (e.g. an animated GIF) inline in a notebook; nothing in a script.

    Parameters
    ----------
    path : str or os.PathLike
        The image file, already written (a script prints its path itself).

    Raises
    ------
    TypeError
        If ``path`` is not a ``str`` or ``os.PathLike``.
    ValueError
        If ``path`` is not a readable regular file (checked in a script too, so that a mistake shows
        before the exercise is run as a notebook).
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(
            f"path must be an image file's path (a str or os.PathLike), got {summarize(path)} ({type(path).__name__})."
        )
    why = not_a_file(path)
    if why is not None:
        raise ValueError(f"path must be an image file already written, but {why}.")
    if in_notebook():
        from IPython.display import Image, display

        display(Image(data=Path(path).read_bytes(), format=Path(path).suffix.lstrip(".")))

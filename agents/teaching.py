"""Helpers shared by the teaching exercises (``examples/teach_*.py``).

Each exercise runs both as a script (``python examples/teach_01_first_bandit.py --out DIR``: its figures
are written to files and their paths printed) and as a Jupyter notebook (its figures are shown inline
under the cell that draws them). These helpers hold what the nine exercises share: telling the two
apart, the ``--out`` option, and showing or saving a figure.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["in_notebook", "out_folder", "show", "show_file", "temp_folder"]


def temp_folder(name: str) -> Path:
    """The folder ``name``, followed by the user's id where there is one, in the system's temporary folder.

    The temporary folder is shared by every user of a machine: a folder of a fixed name that one
    user created cannot be written by the next (``PermissionError``), so each user has their own.

    Parameters
    ----------
    name : str
        The folder's name, e.g. ``"bandit-envs-teaching"``.

    Returns
    -------
    Path
        ``<temp>/<name>-<uid>`` (``<temp>/<name>`` where the system has no user ids).
    """
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


def out_folder(description: str) -> Path:
    """The folder an exercise writes its files to: the script's ``--out DIR`` option.

    Parameters
    ----------
    description : str
        The exercise's one-line description, shown by ``--help``.

    Returns
    -------
    Path
        ``--out`` as given, or this user's ``bandit-envs-teaching`` folder in the temporary folder
        (:data:`DEFAULT_OUT`). In a notebook the kernel's own command line (``-f connection-file``) is
        skipped and the default is returned.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"folder for the figures (default: {DEFAULT_OUT})"
    )
    args = parser.parse_known_args()[0] if in_notebook() else parser.parse_args()
    return Path(args.out)


def show(fig: Any, out: Path, name: str) -> Path | None:
    """Show a matplotlib figure inline in a notebook, or save it as ``out / name`` and print its path.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (with a canvas, e.g. ``FigureCanvasAgg(fig)``).
    out : Path
        The script's output folder (see `out_folder`); created if missing. Unused in a notebook.
    name : str
        The file name, e.g. ``"teach_01_first_bandit.png"``.

    Returns
    -------
    Path or None
        The file written, or None in a notebook (nothing is written there).
    """
    if in_notebook():
        from IPython.display import Image, display

        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=120, bbox_inches="tight")
        display(Image(data=png.getvalue(), format="png"))
        return None
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print(f"figure: {path}")
    return path


def show_file(path: Path) -> None:
    """Show an image file (e.g. an animated GIF) inline in a notebook; nothing in a script.

    Parameters
    ----------
    path : Path
        The image file, already written (a script prints its path itself).
    """
    if in_notebook():
        from IPython.display import Image, display

        display(Image(data=Path(path).read_bytes(), format=Path(path).suffix.lstrip(".")))

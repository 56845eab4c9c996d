"""The teaching helpers (agents/teaching.py) and the examples that share them: output folders and bad input.

The exercises write their figures into a folder of the user's in the system's temporary folder. That
folder's name is predictable and the temporary folder is shared, so another user may have created it
first; the helpers must then refuse it rather than write through a link. Their public functions answer
bad arguments with one sentence naming the argument (TypeError or ValueError), not a traceback from
inside pathlib or matplotlib, and never write elsewhere than they print.
"""

from __future__ import annotations

import os
import runpy
import stat
import sys
import tempfile
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from agents import teaching

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
POSIX = pytest.mark.skipif(not hasattr(os, "getuid"), reason="no user ids: the temporary folder is the user's own")


@pytest.fixture
def fig() -> Figure:
    figure = Figure(figsize=(2, 2))
    FigureCanvasAgg(figure)
    figure.add_subplot().plot([0, 1], [0, 1])
    return figure


@pytest.fixture
def shared_temp(tmp_path, monkeypatch) -> Path:
    """A stand-in for the system's temporary folder (``tempfile.gettempdir()``)."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


# --- the default folder in the shared temporary folder ------------------------------------------------


@POSIX
def test_default_folder_that_is_a_link_is_refused(fig, shared_temp, tmp_path):
    """Another user made the predictable folder a link: no figure is written through it."""
    victim = tmp_path / "victim"
    victim.mkdir()
    folder = teaching.temp_folder("bandit-envs-teaching")
    folder.symlink_to(victim, target_is_directory=True)
    with pytest.raises(PermissionError, match="is a link"):
        teaching.show(fig, folder, "teach_01_first_bandit.png")
    assert list(victim.iterdir()) == []


@POSIX
def test_world_writable_default_folder_with_a_planted_link_is_refused(fig, shared_temp, tmp_path):
    """A folder others may write to can hold a link under a figure's name: the file it points to is not overwritten."""
    precious = tmp_path / "thesis.tex"
    precious.write_text("my thesis", encoding="utf-8")
    folder = teaching.temp_folder("bandit-envs-teaching")
    folder.mkdir()
    os.chmod(folder, 0o777)
    (folder / "teach_01_first_bandit.png").symlink_to(precious)
    with pytest.raises(PermissionError, match="may be written by other users"):
        teaching.show(fig, folder, "teach_01_first_bandit.png")
    assert precious.read_text(encoding="utf-8") == "my thesis"


@POSIX
def test_default_folder_of_another_user_is_refused(fig, shared_temp, monkeypatch):
    folder = teaching.temp_folder("bandit-envs-teaching")
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(os, "getuid", lambda: os.stat(folder).st_uid + 1)
    with pytest.raises(PermissionError, match="belongs to another user"):
        teaching.show(fig, folder, "teach_01_first_bandit.png")
    assert not (folder / "teach_01_first_bandit.png").exists()


@POSIX
def test_new_folders_in_the_temporary_folder_are_private_and_reused(fig, shared_temp):
    old_umask = os.umask(0o022)
    try:
        folder = teaching.temp_folder("bandit-envs-teaching") / "sub"
        path = teaching.show(fig, folder, "a.png")
        again = teaching.show(fig, folder, "b.png")  # this user's own folder: written again without complaint
    finally:
        os.umask(old_umask)
    assert path == folder / "a.png" and path.stat().st_size > 0 and again == folder / "b.png"
    for made in (folder.parent, folder):
        assert stat.S_IMODE(os.stat(made).st_mode) & 0o077 == 0, oct(os.stat(made).st_mode)


@POSIX
def test_the_temporary_folder_itself_is_refused(fig, shared_temp):
    os.chmod(shared_temp, 0o1777)
    with pytest.raises(PermissionError, match="is the temporary folder"):
        teaching.output_folder(shared_temp)
    assert not (shared_temp / "a.png").exists()


def test_a_folder_outside_the_temporary_folder_is_created_as_given(fig, shared_temp, tmp_path):
    """The ownership checks are for the shared folder only: a folder elsewhere is the user's choice."""
    out = tmp_path / "mine" / "figures"
    assert teaching.show(fig, out, "a.svg") == out / "a.svg"
    assert (out / "a.svg").stat().st_size > 0


# --- paths as the user gives them ----------------------------------------------------------------------


def test_a_leading_tilde_is_the_home_folder(fig, tmp_path, monkeypatch, capsys):
    """``--out=~/figures`` (a ~ the shell did not expand) is the home folder, not a folder named ~ here."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["teach_01_first_bandit.py", "--out=~/figures"])
    out = teaching.out_folder("Exercise 1.")
    assert out == home / "figures"
    assert teaching.show(fig, "~/figures", "a.png") == home / "figures" / "a.png"
    assert (home / "figures" / "a.png").stat().st_size > 0
    assert not (tmp_path / "~").exists()
    assert f"figure: {home / 'figures' / 'a.png'}" in capsys.readouterr().out


def test_show_takes_a_folder_given_as_text(fig, tmp_path):
    out = str(tmp_path / "figures")
    assert teaching.show(fig, out, "a.png") == Path(out) / "a.png"


def test_an_out_that_is_a_file_is_one_sentence(fig, tmp_path, monkeypatch, capsys):
    afile = tmp_path / "notes.txt"
    afile.write_text("notes", encoding="utf-8")
    with pytest.raises(ValueError, match=r"out .*notes\.txt' is a file, not a folder"):
        teaching.show(fig, afile, "a.png")
    monkeypatch.setattr(sys, "argv", ["teach_01_first_bandit.py", "--out", str(afile)])
    with pytest.raises(SystemExit) as stop:
        teaching.out_folder("Exercise 1.")
    assert stop.value.code == 2
    assert "argument --out" in capsys.readouterr().err
    assert afile.read_text(encoding="utf-8") == "notes"


# --- bad arguments: one sentence naming the argument ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "error", "words"),
    [
        (
            "figure",
            ValueError,
            "ending in an extension matplotlib writes",
        ),  # was written as figure.png, printed as figure
        ("figure.xyz", ValueError, "ending in an extension matplotlib writes"),
        ("../escape.png", ValueError, "plain file name"),  # was written outside the folder
        ("sub/a.png", ValueError, "plain file name"),
        ("", ValueError, "plain file name"),
        (".", ValueError, "plain file name"),
        (3, TypeError, "must be a file name"),
        (True, TypeError, "must be a file name"),
        (None, TypeError, "must be a file name"),
    ],
)
def test_show_refuses_a_bad_file_name(fig, tmp_path, name, error, words):
    out = tmp_path / "figures"
    with pytest.raises(error, match="^name ") as caught:
        teaching.show(fig, out, name)
    assert words in str(caught.value)
    assert not out.exists() and not (tmp_path / "escape.png").exists()


@pytest.mark.parametrize(
    ("out", "error"),
    [(5, TypeError), (None, TypeError), (True, TypeError), (b"figures", TypeError), ("", ValueError)],
)
def test_show_refuses_a_bad_folder(fig, out, error):
    with pytest.raises(error, match="^out must "):
        teaching.show(fig, out, "a.png")


@pytest.mark.parametrize("bad", [None, "figure", 3])
def test_show_refuses_what_is_not_a_figure(bad, tmp_path):
    with pytest.raises(TypeError, match="^fig must be a matplotlib Figure, got "):
        teaching.show(bad, tmp_path, "a.png")


def test_show_refuses_an_axes(fig, tmp_path):
    with pytest.raises(TypeError, match=r"^fig must be a matplotlib Figure, got .*\(Axes\)"):
        teaching.show(fig.axes[0], tmp_path, "a.png")


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("../escape", ValueError),
        ("a/b", ValueError),
        ("", ValueError),
        ("..", ValueError),
        ("a\0b", ValueError),
        (3, TypeError),
        (True, TypeError),
        (None, TypeError),
    ],
)
def test_temp_folder_refuses_a_name_that_is_not_a_plain_folder_name(name, error):
    """A name with a folder part would point outside the temporary folder."""
    with pytest.raises(error, match="^name must be "):
        teaching.temp_folder(name)


def test_show_file_refuses_a_missing_file_and_a_non_path(tmp_path):
    with pytest.raises(ValueError, match=r"^path must be an image file already written, but .*missing\.gif does not"):
        teaching.show_file(tmp_path / "missing.gif")
    with pytest.raises(ValueError, match="is a folder, not a file"):
        teaching.show_file(tmp_path)
    with pytest.raises(TypeError, match="^path must be an image file's path"):
        teaching.show_file(None)  # type: ignore[arg-type]


def test_out_folder_refuses_a_description_that_is_not_text(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["teach_01_first_bandit.py"])
    with pytest.raises(TypeError, match="^description must be a str, got 3 "):
        teaching.out_folder(3)  # type: ignore[arg-type]


# --- the examples that write files ----------------------------------------------------------------------


@pytest.mark.integration  # runs an example script
def test_bring_your_own_agent_reports_a_bad_option_in_one_sentence(tmp_path, monkeypatch, capsys):
    """``--runs 0`` stops with argparse's usage error (exit status 2), not a traceback of the experiment runner."""
    path = EXAMPLES / "bring_your_own_agent.py"
    monkeypatch.setattr(sys, "argv", [str(path), "--out", str(tmp_path), "--runs", "0"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(path), run_name="__main__")
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--runs must be an integer >= 1" in err and "Traceback" not in err


@pytest.mark.integration  # runs an example script
def test_bring_your_own_agent_checks_its_folder_before_running(tmp_path, monkeypatch, capsys):
    """An --out that is a file stops the script before the experiment (it ran it, then failed in mkdir)."""
    afile = tmp_path / "results.csv"
    afile.write_text("mine", encoding="utf-8")
    path = EXAMPLES / "bring_your_own_agent.py"
    # --runs 0 as well: the folder must be refused first (before any experiment is even configured).
    monkeypatch.setattr(sys, "argv", [str(path), "--out", str(afile), "--runs", "0"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(path), run_name="__main__")
    assert stop.value.code == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert afile.read_text(encoding="utf-8") == "mine"


@pytest.mark.integration  # runs an example script
def test_arm_statistics_rl_without_the_rl_extra_says_so(monkeypatch):
    """Without stable-baselines3 the example stops with one sentence (it raised ModuleNotFoundError on import)."""
    path = EXAMPLES / "arm_statistics_rl.py"
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)  # find_spec then reports it missing
    monkeypatch.setattr(sys, "argv", [str(path)])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(path), run_name="__main__")
    assert 'pip install -e ".[rl]"' in str(stop.value.code)


@POSIX
@pytest.mark.integration  # runs an example script (about five seconds)
def test_watch_it_learn_does_not_write_its_gif_through_a_link(shared_temp, tmp_path, monkeypatch):
    """Exercise 8 writes its GIF through the same checks as the figures (it called OUT.mkdir itself)."""
    pytest.importorskip("imageio")
    victim = tmp_path / "victim"
    victim.mkdir()
    folder = shared_temp / "bandit-envs-teaching-link"
    folder.symlink_to(victim, target_is_directory=True)
    path = EXAMPLES / "teach_08_watch_it_learn.py"
    monkeypatch.setattr(sys, "argv", [str(path), "--out", str(folder)])
    with pytest.raises(PermissionError, match="is a link"):
        runpy.run_path(str(path), run_name="__main__")
    assert list(victim.iterdir()) == []

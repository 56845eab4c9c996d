"""Edges of the ``banditlab`` command met by real processes: where its output goes, and crashes.

Most tests start ``python -m banditlab`` as the console script runs it, with its standard output a
pipe whose reader has gone, a full device or a terminal whose encoding cannot show every character,
without a standard error, or with a user agent that crashes the process running it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Bound on every wait for a process (generous: the machine may be shared).
WAIT = 120.0


def _banditlab(*args: str, cwd: Path, env: dict[str, str] | None = None, **popen: Any) -> subprocess.CompletedProcess:
    """``python -m banditlab ARGS`` importing this tree, run to its end (output captured as text unless redirected)."""
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    environ.update(env or {})
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "banditlab", *args],
        cwd=cwd,
        env=environ,
        text=True,
        timeout=WAIT,
        check=False,
        **popen,
    )


@pytest.mark.parametrize("buffered", [False, True], ids=["unbuffered", "buffered"])
def test_a_reader_of_standard_output_that_has_gone_is_no_error(buffered, tmp_path):
    """``banditlab list | head -1``: the pipe closed before banditlab prints is not a write error of a folder.

    Unbuffered, the failed print was reported as a file of the output folder that could not be
    written (exit 74); buffered, Python's exit flush printed ``Exception ignored ... BrokenPipeError``
    (exit 120).
    """
    read, write = os.pipe()
    os.close(read)  # the reader has gone before anything is printed
    env = {"PYTHONUNBUFFERED": "" if buffered else "1"}
    try:
        done = _banditlab("list", cwd=tmp_path, env=env, stdout=write)
    finally:
        os.close(write)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_standard_output_that_cannot_be_written_is_named_as_such(tmp_path):
    """A full device on standard output is one sentence naming standard output, not an output folder, and 74."""
    with open("/dev/full", "w") as full:
        done = _banditlab("list", cwd=tmp_path, stdout=full)
    assert done.returncode == 74
    assert done.stderr == "banditlab: error: cannot write to standard output: No space left on device.\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", [("--help",), ("run", "--help"), ("score", "--help")], ids=" ".join)
def test_help_that_cannot_be_written_is_an_error_not_silence(args, tmp_path):
    """``banditlab --help > /dev/full``: argparse dropped the failed write: exit 0, nothing shown."""
    with open("/dev/full", "w") as full:
        done = _banditlab(*args, cwd=tmp_path, stdout=full)
    assert done.returncode == 74
    assert done.stderr == "banditlab: error: cannot write to standard output: No space left on device.\n"


def test_help_to_a_closed_pipe_is_no_error(tmp_path):
    """``banditlab run --help | head -1`` with the reader gone: exit 0, nothing on standard error."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = _banditlab("run", "--help", cwd=tmp_path, stdout=write)
    finally:
        os.close(write)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_help_is_printed_whole(tmp_path):
    """The help still reaches standard output, every option listed."""
    done = _banditlab("run", "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: banditlab run")
    assert "--task-timeout" in done.stdout and done.stdout.endswith("\n")


@pytest.mark.parametrize(
    "args",
    [("run", "gap/regret-eps", "--quick", "--out"), ("report", "gap/regret-eps"), ("score", "UCB", "--out"),
     ("audit", "all", "--out")],
    ids=lambda a: " ".join(a[:2]),
)  # fmt: skip
def test_a_very_long_folder_is_not_echoed_whole(args, tmp_path):
    """A 5,000-character folder name: the sentence shows its start and length, not 5 KB of it."""
    long = str(tmp_path / ("a" * 5000))
    done = _banditlab(*args, long, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("banditlab: error: ") and done.stderr.count("\n") == 1
    assert "... (" in done.stderr and "characters)" in done.stderr
    assert len(done.stderr) < 600


def test_characters_the_terminals_encoding_cannot_show_are_escaped_not_a_traceback(tmp_path):
    """An ASCII standard output (e.g. ``LC_ALL=C``): ``§`` of the experiments' titles is printed as an escape."""
    done = _banditlab("list", cwd=tmp_path, env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "gap paper \\xa75.1" in done.stdout


CRASHING_AGENT = """
import os
import re
import signal

from agents import Agent


class Crashes(Agent):
    name = "Crashes"

    def __init__(self, n_arms, *, seed=None):
        super().__init__(n_arms, seed=seed)
        self.t = 0

    def _reset_state(self):
        self.t = 0

    def act(self, obs=None):
        self.t += 1
        if self.t > 20:
            os.kill(os.getpid(), signal.SIGSEGV)  # as a crash in the agent's compiled code would
        return 0

    def update(self, action, reward, info=None):
        pass
"""


def test_a_user_agent_that_crashes_banditlab_s_own_process_names_its_file_and_line(tmp_path):
    """``--jobs 1`` runs the tasks in banditlab's own process: a segfault there ended it without a word."""
    agent = tmp_path / "crash agent é.py"
    agent.write_text(CRASHING_AGENT, encoding="utf-8")
    done = _banditlab(
        "run", "gap/regret-eps", "--quick", "--runs", "1", "--horizon", "100", "--jobs", "1", "--no-progress",
        "--out", str(tmp_path / "out"), "--agent", f"{agent}:Crashes", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == -11  # it still ends by the signal, as the crash would have ended it
    assert "Fatal Python error: Segmentation fault" in done.stderr
    # faulthandler writes a character outside ASCII as an escape (\xe9 for é)
    assert re.search(rf'File "{re.escape(str(tmp_path))}/crash agent \S+\.py", line \d+ in act', done.stderr)


def test_score_refuses_page_without_leaderboard_instead_of_ignoring_it(tmp_path, capsys):
    """``--page`` is the leaderboard's page: with one agent it scored the agent and wrote no page, without a word."""
    from agents.experiments.cli import main

    assert main(["score", "UCB", "--quick", "--page", str(tmp_path / "mine.md"), "--out", str(tmp_path / "o")]) == 2
    page = str(tmp_path / "mine.md")
    err = capsys.readouterr().err
    assert err == f"banditlab: error: --page applies only to --leaderboard, got --page {page!r} without it.\n"
    assert not (tmp_path / "o").exists()


def test_a_run_without_standard_error_still_writes_its_outputs(tmp_path):
    """``banditlab run ... 2>&-`` (as some job schedulers start it): its progress bar failed the run (exit 1)."""
    out = tmp_path / "out"
    done = _banditlab(
        "run", "gap/regret-eps", "--quick", "--runs", "1", "--horizon", "100", "--jobs", "1", "--out", str(out),
        cwd=tmp_path, stderr=None, preexec_fn=lambda: os.close(2),
    )  # fmt: skip
    assert done.returncode == 0
    assert sorted(p.name for p in out.iterdir()) == [".banditlab.json", "figure.png", "meta.json", "results.csv",
                                                     "summary.md"]  # fmt: skip


def test_an_audit_that_crashes_in_banditlab_s_code_is_not_read_as_a_violation(tmp_path):
    """A failure of banditlab's own code exited 1, the status ``audit`` gives a violation."""
    script = (
        "import sys, agents.audit as a\n"
        "def broken(*args, **kwargs):\n"
        "    raise RuntimeError('a defect in the audit')\n"
        "a.run_audit = broken\n"
        "from agents.experiments.cli import main\n"
        "sys.exit(main(['audit', 'UCB', '--runs', '200']))\n"
    )
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=environ, text=True, capture_output=True, timeout=WAIT
    )
    assert done.returncode == 70, done.stderr
    assert done.stdout == ""  # no verdict
    lines = done.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-1] == (
        "banditlab: internal error: RuntimeError: a defect in the audit; this is a defect of banditlab, the "
        "traceback above says where; exit status 70, which is neither a verdict nor bad input."
    )


@pytest.mark.parametrize("command", [["audit", "UCB", "--runs", "200"], ["list"]])
def test_running_out_of_memory_is_one_sentence_and_the_internal_error_status(command, monkeypatch, capsys):
    """A MemoryError anywhere in a command: status 70 (not an audit's 1), and what to try."""
    import agents.audit
    from agents.experiments import cli

    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(agents.audit, "run_audit", no_memory)
    monkeypatch.setattr(cli, "_list", no_memory)
    assert cli.main(command) == cli.INTERNAL_ERROR_EXIT == 70
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        "banditlab: internal error: the machine ran out of memory (MemoryError); a smaller --runs, --horizon or "
        "--jobs needs less; exit status 70, which is neither a verdict nor bad input."
    )


def test_a_setting_refused_mid_sweep_keeps_no_parts_so_the_corrected_command_runs(tmp_path, capsys):
    """An ε no task can run with, refused after other settings finished: their saved parts made the fix need --fresh."""
    from agents.experiments.cli import main

    out = tmp_path / "out"
    scale = ["--runs", "1", "--horizon", "200", "--jobs", "1", "--no-progress", "--out", str(out)]
    assert main(["run", "ldp-linucb/sqrt-t", "--set", "epsilon=1e308", *scale]) == 2
    err = capsys.readouterr().err
    assert "epsilon must be a number in [1e-100, 1e+100]" in err and err.endswith("nothing of this sweep was kept.\n")
    assert not (out / "parts").exists()
    assert main(["run", "ldp-linucb/sqrt-t", "--set", "epsilon=1", *scale]) == 0  # no --fresh needed
    assert (out / "results.csv").is_file()

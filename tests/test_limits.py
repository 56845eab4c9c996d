"""Limits and resources: inputs and faults beyond what the machine or the file system allows are one
sentence and a distinct exit status, never a traceback, and lose nothing.

* sizes: a scale whose tasks or results would not fit, a horizon or parameter that an agent or env
  refuses inside a task, an audit horizon whose reward tables would not fit: exit 2;
* files: an ``--out`` name longer than the file system allows, JSON nested too deep: exit 2;
* start-up: Ctrl-C while ``banditlab`` imports its modules is one line and exit 130;
* space: a full disk (a small tmpfs, where mounting is allowed) or a file-size limit
  (``RLIMIT_FSIZE``): exit 74, every file written before kept byte for byte, and the same command
  run again once there is space writes the results.csv of an uninterrupted run.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_cli_outputs import EID, SMALL, _main, _sentence

from agents.experiments.api import UsageError, configure
from agents.experiments.cli import main
from bandit_envs.validation import PATH_SHOWN, shorten

ROOT = Path(__file__).resolve().parents[1]
#: Bound on every wait for a process (generous: the machine may be shared).
WAIT = 90.0


def _child_env() -> dict[str, str]:
    """This environment, with this tree first on the path (so the child imports this tree's code)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _banditlab(*args: str, cwd: Path, memory: int | None = None, file_size: int | None = None):
    """Run ``python -m agents.experiments.cli ARGS`` to the end, its address space or file size capped (bytes).

    Python ignores SIGXFSZ, so a write beyond ``file_size`` fails with EFBIG.
    """

    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        if file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    return subprocess.run(
        [sys.executable, "-m", "agents.experiments.cli", *args],
        cwd=cwd,
        env=_child_env(),
        capture_output=True,
        text=True,
        timeout=WAIT,
        preexec_fn=limit,
    )


def _one_sentence(err: str) -> str:
    assert "Traceback" not in err, err
    # A cold numba cache (a fresh clone, CI) announces its compiling first: not part of the sentence.
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("Compiling numba kernels")]
    assert len(lines) == 1 and lines[0].startswith("banditlab: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of a small finished run (3 tasks)."""
    folder = tmp_path_factory.mktemp("small") / "out"
    assert main(["run", EID, *SMALL, "--out", str(folder)]) == 0
    return folder


# --- names and files the file system or the JSON reader cannot take ------------------------------


@pytest.mark.parametrize("nested", [False, True], ids=["folder", "parent"])
def test_an_out_name_longer_than_the_file_system_allows_is_one_sentence(nested, tmp_path, capsys):
    out = tmp_path / ("A" * 300)
    if nested:
        out = out / "results"
    assert _main(["run", EID, *SMALL, "--out", str(out)]) == 2
    line = _sentence(capsys)
    shown = shorten(str(out), PATH_SHOWN)  # a path over 200 characters is cut, its length given
    assert f"--out {shown} cannot be a folder (File name too long)" in line
    assert not any(tmp_path.iterdir())  # nothing created


@pytest.mark.parametrize("name", ["meta.json", ".banditlab.json"])
def test_json_nested_100000_levels_deep_is_one_sentence(name, small_run, tmp_path, capsys):
    folder = tmp_path / "out"
    shutil.copytree(small_run, folder)
    deep = "[" * 100_000 + "]" * 100_000
    (folder / name).write_text(deep)
    code = _main(["report", EID, str(folder)] if name == "meta.json" else ["run", EID, *SMALL, "--out", str(folder)])
    assert code == 2
    line = _sentence(capsys)
    assert str(folder / name) in line or str(folder) in line
    assert (folder / name).read_text() == deep  # never overwritten


# --- sizes ------------------------------------------------------------------------------------------


@pytest.mark.integration  # fault injection: banditlab in a subprocess capped at 3 GiB of address space
@pytest.mark.parametrize("eid", ["gap/privacy", "dp-mab/epsilon"])
def test_runs_whose_tasks_and_results_would_not_fit_are_refused_before_allocating(eid, tmp_path):
    """A child capped at 3 GiB of address space: building a billion tasks would fail there, or run on."""
    done = _banditlab("run", eid, "--runs", "1000000000", "--no-progress", "--out", "out", cwd=tmp_path, memory=3 << 30)
    assert done.returncode == 2, done.stderr
    line = _one_sentence(done.stderr)
    assert "--runs 1000000000" in line and f"the largest --runs for {eid} is " in line
    assert not (tmp_path / "out").exists()


def test_the_largest_runs_named_fits_and_one_more_does_not(monkeypatch):
    monkeypatch.setenv("BANDIT_ENVS_MEMORY_LIMIT", str(64 << 20))
    with pytest.raises(UsageError, match="--runs 100000 ") as refused:
        configure(EID, runs=100_000)
    largest = int(str(refused.value).rsplit(" is ", 1)[1].rstrip(".").replace(",", ""))
    assert configure(EID, runs=largest).runs == largest
    with pytest.raises(UsageError, match=f"--runs {largest + 1} "):
        configure(EID, runs=largest + 1)


@pytest.mark.parametrize(
    ("eid", "option", "needle"),
    [
        ("gap/privacy", "--set=epsilon=1e-320", "epsilon=1e-320"),
        ("ldp-linucb/sqrt-t", "--set=epsilon=1e-320", "epsilon=1e-320"),
        ("ldp-linucb/epsilon", "--horizon=10000000000000", "would need about"),
        ("graph/side-observations", "--horizon=1000000000000000", "Unable to allocate"),  # a MemoryError
    ],
    ids=["gap-epsilon", "ldp-epsilon", "ldp-horizon", "graph-horizon"],
)
def test_a_setting_an_agent_or_env_refuses_inside_its_task_is_one_sentence(eid, option, needle, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["run", eid, "--runs", "1", "--horizon", "100", option, "--jobs", "2", "--no-progress", "--out", str(out)]
    assert main(argv) == 2
    line = _sentence(capsys)
    assert f"{eid} cannot run its setting " in line and needle in line
    assert not (out / "results.csv").exists()


def test_audit_all_with_runs_whose_outputs_would_not_fit_is_one_sentence(tmp_path, capsys):
    assert main(["audit", "all", "--runs", "1000000000000", "--out", str(tmp_path / "audits")]) == 2
    assert "runs=1000000000000 " in _sentence(capsys)


@pytest.mark.parametrize("agent", ["GAP", "LDPLinUCB"])
def test_an_audit_horizon_whose_inputs_would_not_fit_is_refused_before_building_them(agent, capsys):
    assert main(["audit", agent, "--horizon", "1000000000000"]) == 2
    line = _sentence(capsys)
    assert "horizon=1000000000000" in line and "use a shorter horizon" in line


# --- space ------------------------------------------------------------------------------------------


def _no_space(done: subprocess.CompletedProcess[str], out: Path) -> None:
    assert done.returncode == 74, done.stderr
    line = _one_sentence(done.stderr)
    assert f"cannot write to {out}: " in line and "free some space or raise the limit" in line, line


@pytest.mark.integration  # fault injection: a file size limit in a subprocess
@pytest.mark.parametrize("earlier", [False, True], ids=["new-folder", "over-earlier-results"])
def test_a_file_size_limit_is_exit_74_keeps_every_file_and_the_rerun_is_byte_identical(earlier, small_run, tmp_path):
    out = tmp_path / "out"
    if earlier:  # the same command ran before: its files must survive the failed rerun
        shutil.copytree(small_run, out)
    outputs = [out / name for name in ("results.csv", "meta.json", "figure.png", "summary.md")]
    before = {p: p.read_bytes() for p in outputs} if earlier else {}
    done = _banditlab("run", EID, *SMALL, "--out", str(out), cwd=tmp_path, file_size=100_000)
    _no_space(done, out)
    assert {p: p.read_bytes() for p in before} == before
    assert not [p.name for p in out.iterdir() if p.name.startswith(".banditlab-tmp-")]  # no scratch file left

    again = _banditlab("run", EID, *SMALL, "--out", str(out), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (out / "results.csv").read_bytes() == (small_run / "results.csv").read_bytes()


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 1 MiB tmpfs of 256 inodes mounted for the test (skipped where mounting is not allowed).

    Few inodes: a tmpfs gets one per two pages of the machine's memory by default, millions on a
    large machine, and filling every one of them took minutes.
    """
    where = tmp_path / "disk"
    where.mkdir()
    mount = shutil.which("mount")
    if mount is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    options = "size=1m,nr_inodes=256"
    done = subprocess.run([mount, "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not allowed here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def _fill(disk: Path) -> Path:
    """Write a file on ``disk`` until no byte fits any more; return it."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as f:
        try:
            while True:
                f.write(b"x" * 4096)
        except OSError:  # full
            pass
    return filler


@pytest.mark.integration  # fault injection: a full disk
def test_a_full_disk_is_exit_74_and_the_rerun_after_freeing_space_is_byte_identical(small_disk, small_run, tmp_path):
    filler = _fill(small_disk)
    os.truncate(filler, filler.stat().st_size - 60_000)  # room for some files, not for all of them
    out = small_disk / "out"
    _no_space(_banditlab("run", EID, *SMALL, "--out", str(out), cwd=tmp_path), out)

    filler.unlink()
    again = _banditlab("run", EID, *SMALL, "--out", str(out), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (out / "results.csv").read_bytes() == (small_run / "results.csv").read_bytes()


@pytest.mark.integration  # fault injection: a full disk
def test_an_out_folder_that_cannot_be_made_for_want_of_space_is_exit_74(small_disk, tmp_path):
    """A file system with no room left for one more entry: --out cannot even be created."""
    _fill(small_disk)
    made = 0
    try:
        while True:  # every inode too (tmpfs counts them apart from the bytes)
            (small_disk / f"f{made}").touch()
            made += 1
    except OSError:
        pass
    out = small_disk / "out"
    try:
        out.mkdir()
    except OSError:
        pass
    else:
        out.rmdir()
        pytest.skip("this tmpfs still makes folders when full")
    _no_space(_banditlab("run", EID, *SMALL, "--out", str(out), cwd=tmp_path), out)
    assert not out.exists()


@pytest.mark.integration  # fault injection: a file size limit in a subprocess
def test_a_file_size_limit_while_report_writes_is_exit_74_and_keeps_the_files(small_run, tmp_path):
    folder = tmp_path / "out"
    shutil.copytree(small_run, folder)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    _no_space(_banditlab("report", EID, str(folder), cwd=tmp_path, file_size=2_000), folder)
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


# --- start-up ---------------------------------------------------------------------------------------


def _loaded(pid: int, library: str) -> bool:
    try:
        return library in Path(f"/proc/{pid}/maps").read_text()
    except OSError:  # gone
        return True


@pytest.mark.integration  # fault injection: Ctrl-C to a subprocess
@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="follows the imports through /proc (Linux)")
@pytest.mark.parametrize("library", ["_multiarray_umath", "libllvmlite", "pandas"], ids=["numpy", "numba", "pandas"])
def test_ctrl_c_while_banditlab_imports_its_modules_is_one_line_and_exit_130(library, tmp_path):
    """SIGINT once the child has loaded ``library`` (numpy, then numba, then pandas): still importing."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "banditlab", "run", EID, *SMALL, "--out", str(tmp_path / "out")],
        cwd=tmp_path,
        env=_child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as from an interactive shell
    )
    try:
        deadline = time.monotonic() + WAIT
        while not _loaded(proc.pid, library):
            assert time.monotonic() < deadline, f"banditlab never loaded {library}"
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert err == "banditlab: interrupted.\n" and out == ""
    assert not (tmp_path / "out").exists()

"""Run every benchmark script and print every ratio, grouped by script, with a count of goals met.

Every ``benchmarks/bench_*.py`` with a ``results(quick)`` function is imported and run in turn,
each in a fresh Python process of its own (so one script's threads, compiled kernels or OpenMP
state cannot change the next one's figures, and a crash stops only that script); scripts without
``results``, or whose import fails for a missing optional dependency, are skipped with a note.
The machine is stated first: CPU, cores, Python, numpy and numba versions, and the load average
before the run (other load slows absolute times; the ratios compare runs made side by side, so
they hold better). Exits 1 when a goal is not met, a script fails or a check a ratio states (the same
actions, arms or results on both sides) comes out false, unless
``--no-fail``.

``--write-docs`` rewrites the table between ``<!-- speed:begin -->`` and ``<!-- speed:end -->`` in
``docs/reproductions/README.md`` (section "Speed") with this run's figures, the machine and the
date; nothing else in that file changes. It needs a full run (no ``--quick``, no ``--only``).

Usage: ``python benchmarks/run_all.py [--quick] [--only NAME ...] [--write-docs] [--no-fail]``;
NAME is a script's name with or without ``bench_`` and ``.py`` (``--only env_step peers``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOCS = ROOT / "docs" / "reproductions" / "README.md"
BEGIN, END = "<!-- speed:begin -->", "<!-- speed:end -->"
BUSY_LOAD = 0.5  # 1-minute load average above which other work is taken to be running

# The scripts import ``_common`` (benchmarks/ on the path, as when run alone) and the project
# from this checkout rather than from whatever copy of it is installed.
for path in (str(ROOT), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

from _common import Ratio  # noqa: E402


@dataclass
class Outcome:
    """What running one script gave: its ratios, or why it was skipped or failed."""

    script: str
    ratios: list[Ratio] = field(default_factory=list)
    skipped: str | None = None
    error: str | None = None
    seconds: float = 0.0


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo where there is one)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def version_of(module: str) -> str:
    """``module.__version__``, or "not installed"."""
    try:
        return str(importlib.import_module(module).__version__)
    except ImportError:
        return "not installed"


def load_note() -> str:
    """The load average now, and whether it shows other work running."""
    if not hasattr(os, "getloadavg"):
        return "load average unknown"
    one, five, fifteen = os.getloadavg()
    busy = "other load present" if one >= BUSY_LOAD else "otherwise idle"
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min) before the run: {busy}"


def machine() -> str:
    """One sentence stating the machine and the software measured."""
    cores = os.cpu_count() or 1
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    core_note = f"{cores} cores" if usable == cores else f"{cores} cores ({usable} usable)"
    return (
        f"{cpu_model()}, {core_note}, {platform.system()}; Python {platform.python_version()}, "
        f"numpy {version_of('numpy')}, numba {version_of('numba')}; {load_note()}"
    )


def scripts(only: Sequence[str] = ()) -> list[str]:
    """Module names of the benchmark scripts, sorted; with ``only``, those named there."""
    names = sorted(p.stem for p in HERE.glob("bench_*.py"))
    if not only:
        return names
    wanted = {n.removesuffix(".py").removeprefix("bench_") for n in only}
    unknown = wanted - {n.removeprefix("bench_") for n in names}
    if unknown:
        raise SystemExit(f"no benchmark script named {', '.join(sorted(unknown))}; there are: {', '.join(names)}")
    return [n for n in names if n.removeprefix("bench_") in wanted]


def run_script(name: str, quick: bool) -> Outcome:
    """Import ``name`` and run its ``results(quick)`` in this process, catching what would stop the others."""
    outcome = Outcome(name)
    start = time.perf_counter()
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        outcome.skipped = f"it needs {exc.name or exc}, which is not installed"
        return outcome
    except ImportError as exc:
        outcome.skipped = f"its import failed: {exc}"
        return outcome
    results = getattr(module, "results", None)
    if not callable(results):
        outcome.skipped = "it has no results() function yet (run it alone with its main())"
        return outcome
    try:
        # Any object with Ratio's fields will do (a script may import _common under another name).
        names = [f.name for f in dataclasses.fields(Ratio)]
        outcome.ratios = [Ratio(**{n: getattr(r, n) for n in names}) for r in results(quick=quick)]
    except Exception:  # noqa: BLE001 - one failing script must not hide the others' figures
        outcome.error = traceback.format_exc()
    outcome.seconds = time.perf_counter() - start
    return outcome


def run_isolated(name: str, quick: bool) -> Outcome:
    """Run ``name`` by :func:`run_script` in a child Python process; its output goes straight to ours."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "outcome.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--child-out", str(report)]
        start = time.perf_counter()
        code = subprocess.run([*command, *(["--quick"] if quick else [])], check=False).returncode
        if not report.exists():
            return Outcome(
                name,
                error=f"its process exited with code {code} before reporting",
                seconds=time.perf_counter() - start,
            )
        saved = json.loads(report.read_text())
    saved["ratios"] = [Ratio(**r) for r in saved["ratios"]]
    return Outcome(**saved)


#: A check a ratio's figures state, come out false: "same actions: False", "same arms and regret: no",
#: "streamed == in-memory on T = 50,000: no". Subject and reference did not do the same work.
FAILED_CHECK = re.compile(r"(?:\bsame\b|==)[^:;|\]]*: (?:False|no)\b")


def failed_checks(ratios: Sequence[Ratio]) -> list[Ratio]:
    """The ratios whose figures state a check that came out false (:data:`FAILED_CHECK`)."""
    return [r for r in ratios if FAILED_CHECK.search(r.detail)]


def markdown_cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def goal_cell(ratio: Ratio) -> str:
    """The goal column: "≥ 3× met", "≥ 3× **NOT MET**" or "–"."""
    if ratio.goal is None:
        return "–"
    return f"≥ {ratio.goal:.3g}× {'met' if ratio.met else '**NOT MET**'}"


def speed_table(outcomes: list[Outcome], machine_line: str, command: str) -> str:
    """The generated part of the Speed section: machine, date, table, and what was not measured."""
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    lines = [
        f"Measured on {today} by `{command}`, on: {markdown_cell(machine_line)}.",
        "",
        "Each ratio compares the subject with its reference measured in the same run, alternating",
        "where they are timed side by side (above 1: the subject is faster). A goal set as a time or",
        "a rate is stated as the ratio it needs against the reference measured here. Peer libraries",
        "are measured only when installed (`benchmarks/README.md`).",
        "",
        "| script | measured | ratio | goal | subject vs reference | figures |",
        "|---|---|---|---|---|---|",
    ]
    for outcome in outcomes:
        for r in outcome.ratios:
            lines.append(
                f"| `{outcome.script}` | {markdown_cell(r.name)} | **{r.ratio:.3g}×** | {goal_cell(r)} | "
                f"{markdown_cell(r.subject)} vs {markdown_cell(r.reference)} | {markdown_cell(r.detail)} |"
            )
    missing = [o for o in outcomes if not o.ratios]
    if missing:
        lines.append("")
        lines.append("Not measured in this run:")
        for o in missing:
            why = o.skipped or ("it failed" if o.error else "it returned no ratio (see its printed notes)")
            lines.append(f"- `{o.script}`: {markdown_cell(why)}")
    return "\n".join(lines)


def write_docs(table: str, path: Path = DOCS) -> None:
    """Replace what lies between the speed markers of ``path`` with ``table``; keep every other byte."""
    text = path.read_bytes().decode("utf-8")
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        raise SystemExit(f"{path} has no {BEGIN} ... {END} markers in its Speed section")
    new = text[: begin + len(BEGIN)] + "\n" + table + "\n" + text[end:]
    path.write_bytes(new.encode("utf-8"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs and smaller scales")
    parser.add_argument("--only", nargs="+", default=(), metavar="NAME", help="run only these scripts")
    parser.add_argument("--write-docs", action="store_true", help="rewrite the speed table of the reproductions page")
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even when a goal is not met")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # run one script here, for the parent process
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        outcome = run_script(args.child, args.quick)
        Path(args.child_out).write_text(json.dumps(dataclasses.asdict(outcome)))
        return 0
    if args.write_docs and (args.quick or args.only):
        parser.error("--write-docs writes the whole table from full runs: leave out --quick and --only")

    names = scripts(args.only)
    machine_line = machine()
    print(f"machine: {machine_line}")
    print(f"mode: {'quick' if args.quick else 'full'}\n")
    outcomes = []
    for name in names:
        print(f"== {name}", flush=True)
        outcome = run_isolated(name, args.quick)
        outcomes.append(outcome)
        if outcome.skipped:
            print(f"   skipped: {outcome.skipped}\n")
            continue
        if outcome.error:
            print(outcome.error)
            print(f"   FAILED after {outcome.seconds:.0f} s\n")
            continue
        for r in outcome.ratios:
            print(f"   {r.line()}")
        if not outcome.ratios:
            print("   no ratio measured (see the notes above)")
        print(f"   ({outcome.seconds:.0f} s)\n", flush=True)

    ratios = [r for o in outcomes for r in o.ratios]
    met = [r for r in ratios if r.met is True]
    not_met = [r for r in ratios if r.met is False]
    failed = [o.script for o in outcomes if o.error]
    skipped = [o.script for o in outcomes if o.skipped]
    print(
        f"summary: {len(ratios)} ratios; goals met: {len(met)}, not met: {len(not_met)}, "
        f"no goal: {len(ratios) - len(met) - len(not_met)}; scripts run: {len(outcomes) - len(skipped)}, "
        f"skipped: {len(skipped)}{' (' + ', '.join(skipped) + ')' if skipped else ''}, "
        f"failed: {len(failed)}{' (' + ', '.join(failed) + ')' if failed else ''}; "
        f"checks failed: {len(failed_checks(ratios))}"
    )
    unchecked = failed_checks(ratios)
    for r in not_met:
        print(f"NOT MET: {r.line()}")
    for r in unchecked:
        print(f"CHECK FAILED (subject and reference did not do the same work): {r.line()}")
    if args.write_docs:
        write_docs(speed_table(outcomes, machine_line, "python benchmarks/run_all.py --write-docs"))
        print(f"wrote the speed table of {DOCS.relative_to(ROOT)}")
    if (not_met or failed or unchecked) and not args.no_fail:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``banditlab``: list, run and report the source papers' experiments, with your own agents beside them.

``banditlab list`` prints the ids; ``banditlab run ID [--quick] [--runs N] [--jobs J]
[--horizon T] [--seed S] [--out DIR] [--agent [NAME=]module.path:Factory | [NAME=]path/to/file.py:Factory]...
[--set key=value]... [--data D]... [--backend local|dask --scheduler ADDRESS [--timeout S]]
[--task-timeout S] [--fresh] [--force]`` runs one and writes ``results.csv`` (tidy), ``meta.json``, ``figure.png``
and ``summary.md`` (the paper's numbers and claims beside ours) into ``DIR``; ``banditlab report
ID DIR`` rebuilds the summary and figure from ``DIR/results.csv``; ``banditlab audit [AGENT]
[--epsilon E] [--delta D] [--env ID] [--runs N] [--agent [NAME=]module:Factory] [--seed S] [--horizon T]
[--group G] [--unit entry|report] [--view arms|releases]`` audits an agent's privacy claim empirically
(:mod:`agents.audit`, docs/audit.md) and prints the table line and the details; it exits 1 when the
audit finds a violation, 0 otherwise, and 2 for bad input. ``banditlab audit all --out DIR [--runs N]
[--seed S] [--force]`` runs every audit of :data:`agents.audit.summary.ALL_AUDITS` and writes
``DIR/summary.md`` and ``DIR/figure.png`` under the output-folder rules of ``banditlab run``.
``banditlab score AGENT | --agent [NAME=]FILE.py:Factory [--quick] [--out DIR] [--jobs J]`` scores
one agent on the scorecard's fixed suite (:mod:`agents.experiments.scorecard`, docs/score.md).

The compiled numba kernels are saved to numba's on-disk cache by the first run that needs them
(:mod:`bandit_envs._jit`) and loaded by later runs. A run that compiles says so when it starts
compiling and, if that took more than half a second, how long it took, in one line at the end
(:mod:`agents.experiments.core.compiling`; the time of banditlab's own process). With ``--jobs``
above 1, the first task runs in banditlab's own process and the workers load the kernels it
compiled instead of each compiling them; for the gap experiments, the first task's built-in
agents are compiled before that in groups, one per process side by side (banditlab's own and the
workers') (:class:`agents.experiments.core.backends.LocalBackend`).

Each finished task is saved within half a second under ``DIR/parts`` (:mod:`agents.experiments.core.partial`),
so a run stopped by Ctrl-C, SIGTERM, SIGKILL, a crash or a lost cluster resumes when the same
command is run again (same ``--out``, experiment, scale, seed, agents and data): only the missing
tasks run. ``--fresh`` discards them instead; other options over a saved sweep are refused.
A setting whose parameters an agent or env refuses stops a new sweep with one sentence (exit
status 2) and discards what it saved, as that command can never finish.
Ctrl-C, SIGTERM and SIGHUP stop the workers, say how many tasks are saved and exit with status 130 (``score``
too; ``audit`` exits 130); a second Ctrl-C or SIGTERM while the sweep stops is ignored.
A user agent that fails in a task (raises, calls ``sys.exit``, returns an invalid action), or a
task still running after ``--task-timeout`` seconds, stops the sweep with one sentence naming the
agent, setting, run and round, then the agent's own frames of the traceback; exit status 2, and
the finished tasks stay saved for the same command once the agent is fixed. One that ends the process
running it (a segfault, ``os._exit``) is one sentence and exit status 3 in a worker; in banditlab's own
process (``--jobs 1``, or the first task) a crash prints Python's fatal-error report, whose frames name
the file and line that crashed, and ends banditlab by its signal (``os._exit`` ends it with the agent's
status, without a word); the tasks saved before stay saved. A file that cannot be
written for want of space (a full disk, a disk quota, a file-size limit), or because ``DIR`` was
removed, moved or made read-only while the run went on, is one sentence naming the file and the
system's reason and exit status 74 (:data:`WRITE_ERROR_EXIT`); the workers are stopped, every file
is written under a scratch name and renamed, so none written before is lost, and the same command
resumes once the folder can be written. An exception in banditlab's own code that no check
expected (a defect; or running out of memory) prints its traceback and one sentence, and exits
with status 70 (:data:`INTERNAL_ERROR_EXIT`), never 1, which ``audit`` gives a violation.

banditlab replaces or deletes only files it wrote into ``DIR`` and recorded in
``DIR/.banditlab.json`` (:mod:`agents.experiments.core.outputs`). A folder with other files, or
with the results of another command, is refused unless ``--force``; even then a file banditlab did
not write, or one edited since, is never replaced. banditlab never writes through a link planted
in ``DIR`` (it refuses it), and while a ``run`` or ``report`` writes ``DIR`` a second one on
``DIR`` is refused. ``report`` refuses results that do not hold each row of the scale in
``meta.json`` exactly once, and writes the summary and figure as the run did: with the agents,
user agents and ``--set`` parameters ``meta.json`` records. A leading ``~`` in ``--out``,
``report``'s folder, ``--page`` or an ``--agent`` file is the home folder, as a shell expands it.
An unknown experiment id is refused with the closest id, if one is close.

What a command prints on standard output is printed by :func:`agents.experiments.core.stdout.say`:
once the reader of standard output has gone (a closed pipe, as in ``banditlab list | head -1``)
nothing more is printed and the command goes on, with its own exit status (an audit's verdict
too); a character the terminal's encoding cannot show (ε, ✓ under ``LC_ALL=C``) is printed as an
escape; any other failure to write standard output (e.g. a full disk) is one sentence and exit
status 74.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys
import traceback
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from agents.experiments.api import (
    FIGURE,
    SUMMARY,
    UsageError,
    WriteError,
    run_experiment,
    write_error_sentence,
    write_report,
)

__all__ = ["INTERRUPTED", "NO_SPACE_EXIT", "WRITE_ERROR_EXIT", "build_parser", "main", "run_experiment"]
from tqdm import tqdm

from agents.experiments.core.backends import (
    INTERRUPTED,
    MAX_TASK_TIMEOUT,
    BackendError,
    SweepInterrupted,
    catch_interrupts,
    run_error_status,
)
from agents.experiments.core.compiling import NOTE_SECONDS, CompileWatch
from agents.experiments.core.limits import MAX_HORIZON, MAX_RUNS, MAX_SEED, MIN_HORIZON, count_words
from agents.experiments.core.outputs import OutputError, OutputFolder, folder_argument
from agents.experiments.core.results import (
    META,
    RESULTS,
    ResultsError,
    check_agents,
    check_complete,
    check_meta_complete,
    check_results,
    read_meta,
    read_results,
)
from agents.experiments.core.spec import Experiment
from agents.experiments.core.stdout import StdoutError, say
from agents.experiments.registry import EXPERIMENTS, get_experiment, unknown_experiment
from agents.user_agents import UserAgent, UserAgentError, user_agent
from bandit_envs.validation import PATH_SHOWN, shorten, summarize

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

#: Exit status when a file of the output folder cannot be written (``EX_IOERR`` of sysexits.h): for
#: want of space (a full disk, a disk quota or a file-size limit), or because the folder was removed,
#: moved or made read-only while banditlab wrote it. Every file written before is kept.
WRITE_ERROR_EXIT = 74
#: The same status, by the name it had when only a want of space led to it.
NO_SPACE_EXIT = WRITE_ERROR_EXIT
#: Exit status of a failure in banditlab's own code (``EX_SOFTWARE`` of sysexits.h): an exception
#: no check expected, with its traceback on standard error. Not Python's default 1, which ``audit``
#: gives a violation: a crashed audit must not read as a verdict.
INTERNAL_ERROR_EXIT = 70


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse quotes the arguments it refuses whole: a long word is cut to a prefix and its length
        # (a value our own checks quoted, at most about 100 characters, is left as it is).
        message = re.sub(r"\S{161,}", lambda m: shorten(m.group()), message)
        self.exit(2, f"banditlab: error: {message}\n")

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse drops a failed write, so `banditlab --help > /dev/full` exited 0 with nothing
        # written: standard output goes through `say` (a full disk is one sentence and exit status
        # WRITE_ERROR_EXIT; a closed pipe, as in `banditlab run --help | head -3`, is not an error).
        if message and (file is None or file is sys.stdout):
            say(message.removesuffix("\n"))
        else:
            super()._print_message(message, file)


def _positive(name: str, minimum: int = 1, maximum: int | None = None) -> Any:
    """An argparse type: an integer >= ``minimum`` (and <= ``maximum`` if given), else one sentence."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{name} must be {count_words(minimum, maximum)}, got {summarize(text)}")
        return value

    return parse


def _number(text: str) -> float:
    """``text`` as a float; NaN when it is not a number (every range check then refuses it)."""
    try:
        return float(text)
    except ValueError:
        return float("nan")


def _seconds(name: str, most: float = float("inf")) -> Any:
    def parse(text: str) -> float:
        value = _number(text)
        if not value > 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{name} must be a positive number of seconds, got {summarize(text)}")
        if value > most:
            raise argparse.ArgumentTypeError(f"{name} must be at most {most:g} seconds, got {summarize(text)}")
        return value

    return parse


def _assignment(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"--set must be key=value (e.g. --set epsilon=0.5), got {summarize(text)}")
    return key.strip(), value.strip()


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = _Parser(prog="banditlab", description="Reproduce the source papers' tables and figures, with your agents.")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list experiment ids")
    run = sub.add_parser("run", help="run one experiment")
    run.add_argument("experiment", help="experiment id (see `banditlab list`)")
    run.add_argument("--quick", action="store_true", help="small horizon and few runs (seconds)")
    run.add_argument("--runs", type=_positive("--runs", 1, MAX_RUNS), help="runs (or pairs) per setting")
    run.add_argument(
        "--horizon", type=_positive("--horizon", MIN_HORIZON, MAX_HORIZON), help="rounds per run (10 to 2**53)"
    )
    run.add_argument(
        "--jobs",
        type=_positive("--jobs"),
        help="worker processes (default: one per core; at most one per task and 4 per core)",
    )
    run.add_argument("--seed", type=_positive("--seed", 0, MAX_SEED), default=0, help="base seed (0 to 2**63 - 1)")
    run.add_argument(
        "--out",
        type=folder_argument,
        help=(
            "output folder (default results/<id> with the id's / written -, e.g. results/gap-regret-eps); "
            "banditlab replaces or deletes only files it wrote there"
        ),
    )
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    run.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="[NAME=]MODULE:FACTORY",
        help="add your agent: module.path:Factory or path/to/file.py:Factory, a callable (env, setting, seed) -> "
        "agent, or an agents.Agent subclass (repeatable); labelled NAME if given, else by the agent's own name "
        "(its class's name attribute, or that of one agent the factory builds before the runs), else by the "
        "factory's name",
    )
    run.add_argument(
        "--set",
        action="append",
        default=[],
        type=_assignment,
        metavar="KEY=VALUE",
        dest="overrides",
        help="override a setting parameter (repeatable; `banditlab list` shows each experiment's parameters)",
    )
    run.add_argument(
        "--data",
        action="append",
        help="budget and ldp-linucb experiments: synthetic-movielens, synthetic-gowalla, movielens-latest-small, "
        "ml-100k, ml-1m, ml-10m, gowalla, or a path (budget/* and ldp-linucb/realistic: repeat for several, default "
        "both synthetic data sets; ldp-linucb/epsilon and sqrt-t: one MovieLens value, default synthetic)",
    )
    run.add_argument(
        "--backend",
        choices=("local", "dask"),
        default="local",
        help="where the tasks run: local processes (--jobs) or a Dask distributed cluster (--scheduler)",
    )
    run.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://127.0.0.1:8786")
    run.add_argument(
        "--timeout",
        type=_seconds("--timeout"),
        default=10.0,
        help="seconds to wait for the Dask scheduler, and for workers when it has none (default 10)",
    )
    run.add_argument(
        "--task-timeout",
        type=_seconds("--task-timeout", MAX_TASK_TIMEOUT),
        metavar="S",
        help="stop a task (one setting and run) still running after S seconds, e.g. a hung agent, and exit with "
        "status 2 naming it; the finished tasks stay saved (--backend local only)",
    )
    run.add_argument(
        "--fresh",
        action="store_true",
        help="discard the saved tasks of an interrupted run in the output folder instead of resuming it",
    )
    run.add_argument(
        "--force",
        action="store_true",
        help="write into a folder that holds other files, or replace the results of another command there; files "
        "banditlab did not write (or that were edited since) are still never replaced or deleted",
    )
    _add_audit(sub)
    from agents.experiments.scorecard.cli import add_parser as _add_score

    _add_score(sub, _positive, _seconds)
    report = sub.add_parser("report", help="rebuild summary.md and figure.png from a results.csv")
    report.add_argument("experiment", help="experiment id the results belong to")
    report.add_argument("folder", type=_report_folder, help="folder holding results.csv (written by `run`)")
    return p


def _report_folder(text: str) -> Path:
    """``report``'s FOLDER (argparse ``type``): ``~`` expanded; an empty one is refused, as for ``--out``."""
    return folder_argument(text, "FOLDER")


def _epsilon(text: str) -> float:
    value = _number(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"--epsilon must be a finite number > 0, got {summarize(text)}")
    return value


def _delta(text: str) -> float:
    value = _number(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"--delta must be a number in [0, 1), got {summarize(text)}")
    return value


def _add_audit(sub: Any) -> None:
    from agents.audit import AUDIT_ENVS, BUILTINS, DEFAULT_RUNS, MIN_RUNS, UNITS, VIEWS

    audit = sub.add_parser(
        "audit",
        help="empirical privacy audit: a lower bound on the ε an agent spends, next to its claim",
        description="Run the agent many times with fresh noise on two neighbouring reward tables for its unit, "
        "search events over its arm sequences and print the empirical lower bound on ε with a 95% interval, the "
        "verdict and the audit's power. Exit status: 1 if the audit finds a violation, 0 otherwise, 2 for bad "
        "input. A lower bound only: see docs/audit.md.",
    )
    audit.add_argument(
        "agent",
        metavar="AGENT",
        nargs="?",
        help=f"one of {', '.join(BUILTINS)}, another agent class of the agents package, the label of --agent "
        "(optional: by default the name --agent gives it), or all (every private agent's audit, with --out)",
    )
    audit.add_argument("--epsilon", type=_epsilon, default=1.0, help="ε to build the agent with (default 1)")
    audit.add_argument("--delta", type=_delta, help="claimed δ (default: the agent's per-report δ, else 0)")
    audit.add_argument(
        "--env", default=AUDIT_ENVS[0], help=f"env replaying the reward tables (default {AUDIT_ENVS[0]})"
    )
    audit.add_argument(
        "--runs",
        type=_positive("--runs", MIN_RUNS),
        default=DEFAULT_RUNS,
        help=f"runs per input, half to choose the event and half to bound it (default {DEFAULT_RUNS}, at least "
        f"{MIN_RUNS})",
    )
    audit.add_argument(
        "--agent",
        dest="factory",
        metavar="[NAME=]MODULE:FACTORY",
        help="audit your agent: module.path:Factory or path/to/file.py:Factory, as for `banditlab run --agent`; "
        "labelled AGENT if given, else NAME, else its class's name attribute, else the factory's name; the changed "
        "reward is searched across the horizon (the report's note lists the rounds tried)",
    )
    audit.add_argument(
        "--seed", type=_positive("--seed", 0, MAX_SEED), default=0, help="seed of every run's noise (0 to 2**63 - 1)"
    )
    audit.add_argument("--horizon", type=_positive("--horizon", 2), help="rounds per run (default: per agent)")
    audit.add_argument(
        "--group",
        type=_positive("--group"),
        default=1,
        help="change G units at once (tests the claim for one unit on G: expect a violation for G > 1)",
    )
    audit.add_argument("--unit", choices=tuple(UNITS), help="unit of an agent that does not state one")
    audit.add_argument(
        "--view",
        choices=VIEWS,
        help="observe the arm sequence (arms) or also the counters' releases (releases; default for HybridDPUCB and "
        "TreeDPUCB, arms for the others)",
    )
    audit.add_argument(
        "--out",
        type=folder_argument,
        help="with AGENT = all: folder for summary.md and figure.png (banditlab never replaces files it did not write)",
    )
    audit.add_argument("--force", action="store_true", help="with --out: write beside or over earlier banditlab files")


def _audit(args: argparse.Namespace) -> int:
    """``banditlab audit``: the report on stdout; exit 1 for a violation, 2 for bad input."""
    from agents.audit import BUILTINS, VIOLATION, run_audit, subject_for
    from agents.audit.procedure import check_size

    labelled = args.agent is not None
    if not labelled:
        if args.factory is None:
            print(
                f"banditlab: error: audit needs AGENT (one of {', '.join(BUILTINS)}, another agent class of the "
                "agents package, or all) or --agent MODULE:FACTORY.",
                file=sys.stderr,
            )
            return 2
        try:  # the name banditlab run would give it without building it
            args.agent = user_agent(args.factory, ()).name
        except UserAgentError as exc:
            print(f"banditlab: error: {exc}", file=sys.stderr)
            return 2
    if labelled and args.agent.lower() == "all":
        return _audit_all(args)
    if args.out is not None:
        print(
            f"banditlab: error: --out is for `banditlab audit all`, got it with agent {summarize(args.agent)}.",
            file=sys.stderr,
        )
        return 2
    try:
        subject = subject_for(
            args.agent,
            epsilon=args.epsilon,
            delta=args.delta,
            horizon=args.horizon,
            group=args.group,
            unit=args.unit,
            env_id=args.env,
            factory=args.factory,
            view=args.view,
        )
        check_size(subject, args.runs)
    except (ValueError, TypeError) as exc:  # UserAgentError is a ValueError
        print(f"banditlab: error: {exc}", file=sys.stderr)
        return 2
    try:
        result = run_audit(subject, args.runs, args.seed)
    except UserAgentError as exc:  # a user agent that fails while it plays
        print(f"banditlab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("banditlab: interrupted.", file=sys.stderr)
        return INTERRUPTED
    say(result.report())
    return 1 if result.verdict == VIOLATION else 0


def _audit_all(args: argparse.Namespace) -> int:
    """``banditlab audit all --out DIR``: every audit of :data:`agents.audit.summary.ALL_AUDITS`, summary and figure."""
    if args.out is None:
        print("banditlab: error: --out must name a folder for `banditlab audit all`, got none.", file=sys.stderr)
        return 2
    if (
        args.factory is not None
        or args.horizon is not None
        or args.group != 1
        or args.unit is not None
        or args.view is not None
    ):
        print(
            "banditlab: error: `banditlab audit all` takes only --runs, --seed, --out and --force (each audit has its "
            "own ε, horizon and group).",
            file=sys.stderr,
        )
        return 2
    command = {"command": "audit all", "runs": args.runs, "seed": args.seed}
    try:
        output = OutputFolder.open(args.out)
    except OutputError as exc:
        print(f"banditlab: error: {exc}", file=sys.stderr)
        return 2
    with output:  # locked until the audits are written
        return _audit_all_into(output, args, command)


def _audit_all_into(output: OutputFolder, args: argparse.Namespace, command: dict[str, Any]) -> int:
    """The audits of ``banditlab audit all``, written into ``output`` (locked by the caller)."""
    import time

    from agents.audit import audit
    from agents.audit.summary import ALL_AUDITS, summary_text, write_figure
    from agents.experiments.core.figures import pyplot

    try:
        output.check_may_write(command, args.force, [SUMMARY, FIGURE])
    except OutputError as exc:
        print(f"banditlab: error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    results = []
    try:
        for plan in ALL_AUDITS:
            runs = max(args.runs, plan.runs)
            result = audit(plan.agent, epsilon=plan.epsilon, group=plan.group, horizon=plan.horizon, runs=runs,
                           seed=args.seed)  # fmt: skip
            say(result.line())
            results.append((plan, result))
    except ValueError as exc:  # e.g. runs whose outputs would exceed the memory limit
        print(f"banditlab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("banditlab: interrupted.", file=sys.stderr)
        return INTERRUPTED
    seconds = time.perf_counter() - start
    shown = f"banditlab audit all --runs {args.runs} --seed {args.seed} --out {args.out}"
    try:
        output.set_command(command)
        output.write_text(SUMMARY, summary_text(results, shown, seconds))
        output.write(FIGURE, lambda path: write_figure(results, path, pyplot))
    except OutputError as exc:
        print(f"banditlab: error: {exc}", file=sys.stderr)
        return 2
    say(f"wrote {args.out / SUMMARY} and {args.out / FIGURE}")
    return 0


def _list() -> None:
    for eid, exp in EXPERIMENTS.items():
        params = ", ".join(exp.family.schema) or "none"
        say(f"{eid:20s} {exp.title} ({exp.source}); --set: {params}")


def _report(experiment_id: str, folder: Path) -> str:
    columns = get_experiment(experiment_id).family.columns
    try:
        is_folder = folder.is_dir()
    except OSError:  # e.g. a name longer than the file system allows: read_results says so
        is_folder = False
    if not is_folder:
        _check_not_a_file(folder)
        read_results(folder / RESULTS, columns)  # says the folder must contain results.csv
    # Locked while it reads and writes: a run or report writing the folder meanwhile is refused.
    with OutputFolder.open(folder, "the folder", create=False) as output:
        return _report_locked(experiment_id, output)


def _check_not_a_file(folder: Path) -> None:
    """ResultsError if ``folder``, or the nearest of its parents that exists, is a file rather than a folder."""
    for path in (folder, *folder.parents):
        try:
            mode = os.stat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except (OSError, ValueError):  # e.g. a name the file system cannot take: read_results says so
            return
        if stat.S_ISDIR(mode):
            return
        shown = shorten(os.fsdecode(path), PATH_SHOWN)
        if path == folder:
            raise ResultsError(f"the folder {shown} is a file, not a folder; give the folder that holds results.csv.")
        raise ResultsError(
            f"the folder {shorten(os.fsdecode(folder), PATH_SHOWN)} lies under {shown}, which is a file, not a folder; "
            "give the folder that holds results.csv."
        )


def _report_locked(experiment_id: str, output: OutputFolder) -> str:
    folder = output.path
    family = get_experiment(experiment_id).family
    columns = tuple(dict.fromkeys((*family.columns, *family.keys)))
    results = read_results(folder / RESULTS, columns)
    meta = read_meta(folder / META, required=True)
    if meta.get("experiment") not in (None, experiment_id):
        raise ResultsError(
            f"{folder} holds results of {summarize(meta['experiment'])}, not of {summarize(experiment_id)}."
        )
    check_meta_complete(meta, folder / META)
    exp = _as_it_ran(experiment_id, meta, folder / META)
    # Families that add settings from their data (budget, ldp) do not list "setting" among their columns.
    n_settings = len(exp.settings) if "setting" in family.columns else None
    check_results(results, folder / RESULTS, columns, n_settings, exp.runs)
    check_complete(results, folder / RESULTS, family.keys, exp.runs, exp.horizon, n_settings)
    if meta.get("agents") is not None:
        check_agents(results, folder / RESULTS, meta["agents"])
    output.check_replaceable([FIGURE, SUMMARY])
    try:
        return write_report(results, exp, output, meta)
    except OutputError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, ZeroDivisionError) as exc:
        raise ResultsError(
            f"{folder / RESULTS} does not hold results the {experiment_id} analysis can read ({type(exc).__name__}: "
            f"{exc}); rerun `banditlab run` to write it."
        ) from None


def _as_it_ran(experiment_id: str, meta: dict[str, Any], path: Path) -> Experiment:
    """The experiment as the run that wrote ``meta`` (``meta.json`` at ``path``) configured it.

    Its scale, its agents (the built-in ones it kept, then the user agents, by the names and
    references ``meta.json`` records, without loading them) and its ``--set`` parameters, so that
    ``report`` writes the summary and figure ``run`` wrote: the user agents' columns and claims, and
    the overridden parameters (e.g. ``K = 5`` after ``--set n_arms=5``). A listed name that is not
    an agent of the experiment is taken for a user agent (a ``meta.json`` written before user
    agents were recorded by reference). ResultsError if the recorded overrides cannot be applied.
    """
    base = get_experiment(experiment_id)
    exp = base.scaled(runs=meta["runs"], horizon=meta["horizon"])
    listed = meta.get("agents")
    if listed is not None:
        refs = meta.get("user_agents") or {}
        known = {*base.family.builtin_agents, *base.agents}
        builtin = tuple(a for a in listed if a in known and a not in refs)
        users = tuple(
            UserAgent(name=a, ref=str(refs.get(a, "")), key=str(refs.get(a, ""))) for a in listed if a not in builtin
        )
        settings = exp.settings
        if builtin != base.agents and settings and "agent" in settings[0]:  # as configure keeps the chosen agents'
            settings = tuple(s for s in settings if s["agent"] in builtin)
        exp = replace(exp, agents=builtin, user_agents=users, settings=settings)
    try:
        return exp.with_overrides(dict(meta.get("overrides") or {}))
    except ValueError as exc:
        raise ResultsError(f"{path}: its overrides cannot be applied to {experiment_id} ({exc}).") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``banditlab`` console script: the command's exit status.

    0 on success, 1 for an audit that finds a violation, 2 for bad input, 3 for an unusable
    cluster, :data:`WRITE_ERROR_EXIT` when a file cannot be written (no space, or the output folder
    removed, moved or made read-only meanwhile),
    :data:`INTERRUPTED` after Ctrl-C or SIGTERM and :data:`INTERNAL_ERROR_EXIT` for a failure of
    banditlab's own code (its traceback, then one sentence); each other failure is one sentence on
    standard error.
    """
    try:
        args = build_parser().parse_args(argv)
    except StdoutError as exc:  # --help to a full disk
        print(f"banditlab: error: {exc}", file=sys.stderr)
        return WRITE_ERROR_EXIT
    try:
        return _main(args, argv)
    except (WriteError, StdoutError) as exc:
        print(f"banditlab: error: {exc}", file=sys.stderr)
        return WRITE_ERROR_EXIT
    except OSError as exc:  # writing a report or an audit summary
        folder = getattr(args, "out", None) or getattr(args, "folder", None)
        print(f"banditlab: error: {write_error_sentence(exc, folder)}.", file=sys.stderr)
        return WRITE_ERROR_EXIT
    except KeyboardInterrupt:  # e.g. while `list` runs; Ctrl-C or SIGTERM while `report` runs
        print("banditlab: interrupted.", file=sys.stderr)
        return INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - a defect of banditlab's: its traceback, and never status 1
        traceback.print_exc()
        print(f"banditlab: internal error: {internal_error_sentence(exc)}.", file=sys.stderr)
        return INTERNAL_ERROR_EXIT


def internal_error_sentence(exc: BaseException) -> str:
    """The sentence (no final period) that follows the traceback of an exception no check expected."""
    if isinstance(exc, MemoryError):
        what = "the machine ran out of memory (MemoryError); a smaller --runs, --horizon or --jobs needs less"
    else:
        message = str(exc) if len(str(exc)) <= 200 else str(exc)[:200] + "..."
        what = f"{type(exc).__name__}: {message}; this is a defect of banditlab, the traceback above says where"
    return f"{what}; exit status {INTERNAL_ERROR_EXIT}, which is neither a verdict nor bad input"


def _main(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    if args.command == "list":
        _list()
        return 0
    if args.command == "audit":
        with catch_interrupts():  # SIGTERM ends an audit as Ctrl-C does
            return _audit(args)
    if args.command == "score":
        from agents.experiments.scorecard.cli import main as score_main

        with catch_interrupts():  # SIGTERM stops the sweep like Ctrl-C, as for run
            return score_main(args, argv)
    if args.experiment not in EXPERIMENTS:
        print(f"banditlab: error: {unknown_experiment(args.experiment)}", file=sys.stderr)
        return 2
    if args.command == "report":
        try:
            # SIGTERM ends a report as Ctrl-C does: its scratch files removed, one line, INTERRUPTED (in main).
            with catch_interrupts():
                text = _report(args.experiment, args.folder)
        except (ResultsError, OutputError) as exc:
            print(f"banditlab: error: {exc}", file=sys.stderr)
            return 2
        say(text)
        return 0
    watch = CompileWatch(on_first=_compiling)
    # SIGTERM stops the sweep like Ctrl-C: workers stopped, tasks kept; a second signal does not stop the stop.
    try:
        with catch_interrupts(), watch:
            folder, text = _run_from_args(args, argv)
    except (UsageError, UserAgentError, BackendError, SweepInterrupted) as exc:
        return run_error_status(exc)
    except KeyboardInterrupt:  # outside the sweep (e.g. while the options are checked)
        print("banditlab: interrupted.", file=sys.stderr)
        return INTERRUPTED
    say(text)
    say(f"Wrote {folder / RESULTS}, {folder / META}, {folder / FIGURE} and {folder / SUMMARY}.")
    if watch.seconds >= NOTE_SECONDS:
        sys.stdout.flush()
        print(watch.message(), file=sys.stderr)
    return 0


def _compiling(cached: bool) -> None:
    """Say why the run pauses: numba starts compiling (above the progress bar, if one is shown)."""
    tqdm.write("Compiling numba kernels" + (" (first run only)..." if cached else "..."), file=sys.stderr)


def _run_from_args(args: argparse.Namespace, argv: Sequence[str] | None) -> tuple[Path, str]:
    overrides: dict[str, str] = {}
    for key, value in args.overrides:
        if key in overrides:
            raise UsageError(
                f"--set {shorten(key)} is given twice ({summarize(overrides[key])} and {summarize(value)})."
            )
        overrides[key] = value
    from agents.experiments.scorecard.cli import sweep_keywords

    return run_experiment(
        args.experiment,
        extra_agents=args.agent,
        runs=args.runs,
        horizon=args.horizon,
        data=args.data,
        overrides=overrides,
        task_timeout=args.task_timeout,
        **sweep_keywords(args, argv),
    )


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

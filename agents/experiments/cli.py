"""``banditlab``: list and run the source papers' experiments.

``banditlab list`` prints the ids; ``banditlab run ID [--quick] [--runs N] [--jobs J]
[--horizon T] [--seed S] [--out DIR] [--backend local|dask --scheduler ADDRESS [--timeout S]]
[--fresh]`` runs one and writes ``results.csv`` (tidy), ``figure.png`` and ``summary.md`` (the
paper's numbers beside ours) into ``DIR``; ``banditlab report ID DIR`` rebuilds the summary and
figure from ``DIR/results.csv``.

Each finished task is saved at once under ``DIR/parts`` (:mod:`agents.experiments.partial`), so
a run stopped by Ctrl-C, a crash or a lost cluster resumes when the same command is run again
(same ``--out``, experiment, scale, seed and data): only the missing tasks run. ``--fresh``
discards them instead; other options over a saved sweep are refused. ``results.csv`` is written
in task order from the saved rows, so local, Dask and resumed runs give the same file.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from tqdm import tqdm

from agents.experiments import budget, ldp
from agents.experiments.analysis import SUMMARIES as GAP_SUMMARIES
from agents.experiments.backends import BackendError, SweepInterrupted, make_backend
from agents.experiments.budget_analysis import budget_figure, budget_summary
from agents.experiments.ldp_analysis import ldp_figure, ldp_summary
from agents.experiments.partial import ManifestMismatch, PartialStore, manifest_for
from agents.experiments.registry import EXPERIMENTS, Experiment, get_experiment
from agents.experiments.rl import SUMMARY as RL_SUMMARY
from agents.experiments.runner import default_jobs, tasks_for

SUMMARIES = {**GAP_SUMMARIES, "budget": (budget_summary, budget_figure), "ldp": (ldp_summary, ldp_figure)}
SUMMARIES["rl"] = RL_SUMMARY


class UsageError(ValueError):
    """A bad option value or data set, reported as one sentence without a traceback."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"banditlab: error: {message}\n")


def _positive(name: str, minimum: int = 1) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}")
        return value

    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"--timeout must be a positive number of seconds, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = _Parser(prog="banditlab", description="Reproduce the source papers' tables and figures.")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list experiment ids")
    run = sub.add_parser("run", help="run one experiment")
    run.add_argument("experiment", help="experiment id (see `banditlab list`)")
    run.add_argument("--quick", action="store_true", help="small horizon and few runs (seconds)")
    run.add_argument("--runs", type=_positive("--runs"), help="runs (or pairs) per setting")
    run.add_argument("--horizon", type=_positive("--horizon", 10), help="rounds per run")
    run.add_argument("--jobs", type=_positive("--jobs"), default=default_jobs(), help="worker processes")
    run.add_argument("--seed", type=_positive("--seed", 0), default=0, help="base seed")
    run.add_argument("--out", type=Path, help="output folder (default results/<id>)")
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    run.add_argument(
        "--data",
        action="append",
        help="budget experiments: synthetic-movielens, synthetic-gowalla, movielens-latest-small, ml-100k, ml-1m, "
        "ml-10m, gowalla, or a path (repeat for several; default: both synthetic scenarios)",
    )
    run.add_argument(
        "--backend", choices=("local", "dask"), default="local",
        help="where the tasks run: local processes (--jobs) or a Dask distributed cluster (--scheduler)",
    )  # fmt: skip
    run.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://127.0.0.1:8786")
    run.add_argument(
        "--timeout", type=_seconds, default=10.0,
        help="seconds to wait for the Dask scheduler, and for workers when it has none (default 10)",
    )  # fmt: skip
    run.add_argument(
        "--fresh", action="store_true",
        help="discard the saved tasks of an interrupted run in the output folder instead of resuming it",
    )  # fmt: skip
    report = sub.add_parser("report", help="rebuild summary.md and figure.png from a results.csv")
    report.add_argument("experiment", help="experiment id the results belong to")
    report.add_argument("folder", type=Path, help="folder holding results.csv (written by `run`)")
    return p


def _parse_cell(text: str) -> Any:
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_results(path: Path) -> list[dict[str, Any]]:
    """Read a tidy ``results.csv`` back into typed rows."""
    with open(path, newline="") as fh:
        return [{k: _parse_cell(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def write_report(rows: list[dict[str, Any]], exp: Experiment, folder: Path, meta: dict[str, Any]) -> str:
    """Write ``figure.png`` and ``summary.md`` for an experiment's rows; return the summary."""
    summarize, draw = SUMMARIES[exp.kind]
    draw(rows, exp, folder / "figure.png")
    text = summarize(rows, exp, meta) + "\n![figure](figure.png)\n"
    (folder / "summary.md").write_text(text)
    return text


def run_experiment(
    experiment_id: str,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    jobs: int = 1,
    seed: int = 0,
    out: Path | None = None,
    progress: bool = True,
    data: list[str] | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    timeout: float = 10.0,
    fresh: bool = False,
) -> tuple[Path, str]:
    """Run an experiment and write its CSV, figure and summary; return (folder, summary).

    ``backend="local"`` runs the tasks on ``jobs`` processes, ``backend="dask"`` on the Dask
    scheduler at ``scheduler`` (connecting within ``timeout`` seconds). Finished tasks are saved
    under ``out/parts`` as they arrive; a later call with the same arguments resumes from them
    (``fresh=True`` discards them). Raises :class:`UsageError` for bad options,
    :class:`~agents.experiments.backends.BackendError` (with an exit code) when the cluster fails
    and :class:`~agents.experiments.backends.SweepInterrupted` on Ctrl-C; each says how to resume.
    """
    try:
        executor = make_backend(backend, jobs=jobs, scheduler=scheduler, timeout=timeout)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    exp = get_experiment(experiment_id).scaled(quick=quick, runs=runs, horizon=horizon)
    data_names: dict[str, str] = {}
    if exp.kind == "budget":
        try:
            exp = budget.resolve(exp, data, seed)
        except ValueError as exc:  # unknown --data, a missing or corrupt data file, too few users
            raise UsageError(str(exc)) from exc
        data_names = {s["scenario"]: s["data_name"] for s in exp.settings}
    elif exp.kind == "ldp":
        try:
            exp = ldp.resolve(exp, data)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        data_names = {"movielens": exp.settings[0]["data_name"]}
    elif exp.kind == "rl" and (
        importlib.util.find_spec("stable_baselines3") is None or importlib.util.find_spec("torch") is None
    ):
        raise UsageError(
            f"{experiment_id} needs stable-baselines3 and torch, which are not installed: "
            'pip install "torch==2.13.0" "bandit-envs[rl]".'
        )
    elif data:
        raise UsageError(f"--data applies only to the budget and ldp-linucb experiments, not to {experiment_id!r}.")
    folder = out if out is not None else Path("results") / exp.id.replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    tasks = tasks_for(exp, seed)
    manifest = manifest_for(exp, seed, len(tasks), data_names)
    store = PartialStore(folder, manifest)
    try:
        done = store.finished(fresh)
    except ManifestMismatch as exc:
        raise UsageError(str(exc)) from exc
    pending = [(i, task) for i, task in enumerate(tasks) if i not in done]
    start = time.perf_counter()
    if pending:
        if done:
            print(f"Resuming from {store.path}: {len(done)} of {len(tasks)} tasks are already done.", file=sys.stderr)
        bar = tqdm(total=len(tasks), initial=len(done), desc=exp.id, unit="run", disable=not progress, file=sys.stderr)
        try:
            with executor:
                store.prepare(done)
                for index, rows in executor.run(pending, label=f"{exp.id}-{manifest['fingerprint'][:8]}"):
                    store.save(index, tasks[index].setting_index, tasks[index].run, rows)
                    bar.update(1)
        except BackendError as exc:
            raise BackendError(_resume_note(str(exc), store, len(tasks)), exc.code) from None
        except KeyboardInterrupt:
            raise SweepInterrupted(_resume_note("interrupted", store, len(tasks))) from None
        finally:
            bar.close()
    seconds = time.perf_counter() - start
    rows = store.rows()  # canonical task order, whatever order the tasks finished in
    tmp = folder / "results.csv.tmp"
    with open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(folder / "results.csv")
    store.remove()
    meta: dict[str, Any] = {
        "seed": seed,
        "seconds": seconds,
        "jobs": executor.workers if pending else jobs,
        "runs": exp.runs,
        "horizon": exp.horizon,
        "data": data_names,
        "backend": backend,
        "resumed_tasks": len(done),
    }
    if scheduler is not None:
        meta["scheduler"] = scheduler
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder, write_report(rows, exp, folder, meta)


def _resume_note(message: str, store: PartialStore, n_tasks: int) -> str:
    saved = store.count()
    if not saved:
        return f"{message}."
    return (
        f"{message}; {saved} of {n_tasks} tasks are saved in {store.path}, and running the same command again "
        "resumes from them."
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``banditlab`` console script."""
    args = build_parser().parse_args(argv)
    if args.command == "list":
        for eid, exp in EXPERIMENTS.items():
            print(f"{eid:20s} {exp.title} ({exp.source})")
        return 0
    if args.experiment not in EXPERIMENTS:
        print(
            f"banditlab: error: experiment id must be one of {sorted(EXPERIMENTS)}, got {args.experiment!r}.",
            file=sys.stderr,
        )
        return 2
    if args.command == "report":
        csv_path = args.folder / "results.csv"
        if not csv_path.is_file():
            print(f"banditlab: error: folder must contain results.csv, but {csv_path} does not exist.", file=sys.stderr)
            return 2
        meta_path = args.folder / "meta.json"
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        exp = get_experiment(args.experiment).scaled(runs=meta.get("runs"), horizon=meta.get("horizon"))
        print(write_report(read_results(csv_path), exp, args.folder, meta))
        return 0
    try:
        folder, text = _run_from_args(args)
    except UsageError as exc:
        print(f"banditlab: error: {exc}", file=sys.stderr)
        return 2
    except BackendError as exc:
        print(f"banditlab: error: {exc}", file=sys.stderr)
        return exc.code
    except SweepInterrupted as exc:
        print(f"banditlab: {exc}", file=sys.stderr)
        return 130
    print(text)
    print(f"Wrote {folder / 'results.csv'}, {folder / 'figure.png'} and {folder / 'summary.md'}.")
    return 0


def _run_from_args(args: argparse.Namespace) -> tuple[Path, str]:
    return run_experiment(
        args.experiment,
        quick=args.quick,
        runs=args.runs,
        horizon=args.horizon,
        jobs=args.jobs,
        seed=args.seed,
        out=args.out,
        progress=not args.no_progress,
        data=args.data,
        backend=args.backend,
        scheduler=args.scheduler,
        timeout=args.timeout,
        fresh=args.fresh,
    )


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

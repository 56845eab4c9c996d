"""``banditlab``: list and run the source papers' experiments.

``banditlab list`` prints the ids; ``banditlab run ID [--quick] [--runs N] [--jobs J]
[--horizon T] [--seed S] [--out DIR]`` runs one and writes ``results.csv`` (tidy),
``figure.png`` and ``summary.md`` (the paper's numbers beside ours) into ``DIR``;
``banditlab report ID DIR`` rebuilds the summary and figure from ``DIR/results.csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from tqdm import tqdm

from agents.experiments import budget, ldp
from agents.experiments.analysis import SUMMARIES as GAP_SUMMARIES
from agents.experiments.budget_analysis import budget_figure, budget_summary
from agents.experiments.ldp_analysis import ldp_figure, ldp_summary
from agents.experiments.registry import EXPERIMENTS, Experiment, get_experiment
from agents.experiments.runner import default_jobs, run_tasks, tasks_for

SUMMARIES = {**GAP_SUMMARIES, "budget": (budget_summary, budget_figure), "ldp": (ldp_summary, ldp_figure)}


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
) -> tuple[Path, str]:
    """Run an experiment and write its CSV, figure and summary; return (folder, summary)."""
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
    elif data:
        raise UsageError(f"--data applies only to the budget and ldp-linucb experiments, not to {experiment_id!r}.")
    folder = out if out is not None else Path("results") / exp.id.replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    tasks = tasks_for(exp, seed)
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    bar = tqdm(total=len(tasks), desc=exp.id, unit="run", disable=not progress, file=sys.stderr)
    for chunk in run_tasks(tasks, jobs):
        rows.extend(chunk)
        bar.update(1)
    bar.close()
    seconds = time.perf_counter() - start
    with open(folder / "results.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    meta = {
        "seed": seed,
        "seconds": seconds,
        "jobs": jobs,
        "runs": exp.runs,
        "horizon": exp.horizon,
        "data": data_names,
    }
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder, write_report(rows, exp, folder, meta)


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
    )


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

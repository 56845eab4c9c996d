"""``banditlab score``: the scorecard from the command line, and the leaderboard page it regenerates.

``banditlab score AGENT | --agent [NAME=]FILE.py:Factory | --agent [NAME=]module:Factory [--quick]
[--out DIR] [--jobs J] [--seed S] [--backend local|dask --scheduler ADDRESS] [--fresh] [--force]``
scores one agent (:func:`agents.experiments.scorecard.score`); ``banditlab score --leaderboard
[--quick] [--page docs/leaderboard.md]`` scores the built-in agents only and rewrites the
leaderboard page (docs/leaderboard.md) with its figures beside it, only while the page is as
banditlab wrote it (:mod:`agents.experiments.scorecard.page`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from agents.experiments.core.outputs import OutputError, folder_argument, user_path
from agents.experiments.scorecard.page import FIGURES, check_page, figures_folder, write_page_files

#: Where ``--leaderboard`` writes its page; the figures go to the folder of the same name.
PAGE = Path("docs/leaderboard.md")


def add_parser(sub: Any, positive: Any, seconds: Any) -> None:
    """The ``score`` subcommand's options."""
    p = sub.add_parser(
        "score",
        help="score one agent on the fixed suite, beside the built-in leaders (docs/score.md)",
        description="Score an agent on the fixed, versioned suite of docs/score.md: 0 = uniform random play, "
        "1 = the best arm from the start, per problem with a 95% interval; writes summary.md, figure.png "
        "(radar), regret.png, results.csv and meta.json.",
    )
    p.add_argument("agent", metavar="AGENT", nargs="?", help="a built-in agent name (see docs/score.md)")
    p.add_argument("--agent", dest="user", metavar="[NAME=]FILE.py:Factory|module:Factory",
                   help="your agent instead of a built-in one; declare what it plays with `plays`")  # fmt: skip
    p.add_argument("--quick", action="store_true", help="the quick scale (8 seeds, a tenth of each horizon)")
    p.add_argument("--out", type=folder_argument, help="output folder (default results/score-NAME)")
    p.add_argument("--jobs", type=positive("--jobs"), help="worker processes (default: one per core)")
    p.add_argument("--seed", type=positive("--seed", 0), default=0, help="base seed")
    p.add_argument("--backend", choices=("local", "dask"), default="local", help="local processes or Dask")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address")
    p.add_argument("--timeout", type=seconds("--timeout"), default=10.0, help="seconds to wait for Dask")
    p.add_argument("--fresh", action="store_true", help="discard saved tasks instead of resuming")
    p.add_argument("--force", action="store_true", help="write beside files banditlab did not write")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--leaderboard", action="store_true",
                   help="score the built-in agents only and rewrite the leaderboard page (--page)")  # fmt: skip
    p.add_argument("--page", type=user_path, help=f"with --leaderboard: the page to write (default {PAGE})")


def sweep_keywords(args: argparse.Namespace, argv: Sequence[str] | None) -> dict[str, Any]:
    """The keywords ``banditlab score`` and ``banditlab run`` pass alike to their sweep.

    :func:`~agents.experiments.scorecard.score` and :func:`~agents.experiments.api.run_experiment`
    take the same scale, output, backend and progress options, and the command line to record in
    ``meta.json`` (``argv``, or ``sys.argv`` when None). ``--jobs`` with ``--backend dask`` is refused
    (:class:`~agents.experiments.api.UsageError`) rather than ignored: a Dask cluster runs as many
    tasks at once as its workers have threads.
    """
    if args.jobs is not None and args.backend == "dask":
        from agents.experiments.api import UsageError

        raise UsageError(
            f"--jobs applies only to --backend local, got --jobs {args.jobs} with --backend dask (a Dask cluster "
            "runs as many tasks at once as its workers have threads)."
        )
    return {
        "quick": args.quick,
        "out": args.out,
        "jobs": args.jobs,
        "seed": args.seed,
        "backend": args.backend,
        "scheduler": args.scheduler,
        "timeout": args.timeout,
        "fresh": args.fresh,
        "force": args.force,
        "progress": not args.no_progress,
        "command": ["banditlab", *(sys.argv[1:] if argv is None else argv)],
    }


def main(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """Run ``banditlab score``; the exit status (2 with one sentence for bad input)."""
    from agents.experiments.api import UsageError
    from agents.experiments.core.backends import BackendError, SweepInterrupted, run_error_status
    from agents.experiments.core.stdout import say
    from agents.experiments.scorecard import score
    from agents.user_agents import UserAgentError
    from bandit_envs.validation import summarize

    given = [a for a in (args.agent, args.user) if a is not None]
    if args.leaderboard and given:
        return _error(f"--leaderboard scores the built-in agents only, got the agent {given[0]!r} too.")
    if args.page is not None and not args.leaderboard:  # else it would be ignored without a word
        return _error(f"--page applies only to --leaderboard, got --page {summarize(str(args.page))} without it.")
    page = PAGE if args.page is None else args.page
    if not args.leaderboard and len(given) != 1:
        what = "none" if not given else f"both {args.agent!r} and --agent {args.user!r}"
        return _error(f"banditlab score needs one agent: a built-in name or --agent FILE.py:Factory, got {what}.")
    if args.user is not None and ":" not in args.user:  # else it was taken for a built-in's name
        return _error(
            "--agent takes your agent as [NAME=]FILE.py:Factory or [NAME=]module:Factory (a built-in one goes "
            f"without --agent, e.g. banditlab score UCB), got {summarize(args.user)}."
        )
    if args.leaderboard:  # before scoring: a page that is not banditlab's to replace is refused at once
        try:
            check_page(page)
        except OutputError as exc:
            return _error(str(exc))
    try:
        table = score(None if args.leaderboard else given[0], **sweep_keywords(args, argv))
    except (UsageError, UserAgentError, BackendError, SweepInterrupted) as exc:
        return run_error_status(exc)
    folder = Path(table.attrs["out"])
    if args.leaderboard:
        try:
            write_page(folder, page, table, quick=args.quick)
        except OutputError as exc:  # the page or a figure changed while the agents were scored
            return _error(str(exc))
        say(f"Wrote {page} and its figures from {folder}.")
    else:
        say((folder / "summary.md").read_text(encoding="utf-8"))
        say(f"Wrote {folder}/summary.md, figure.png, regret.png, results.csv and meta.json.")
    return 0


def _error(sentence: str) -> int:
    print(f"banditlab: error: {sentence}", file=sys.stderr)
    return 2


def write_page(folder: Path, page: Path, table: pd.DataFrame, *, quick: bool) -> None:
    """The leaderboard page: scale, time, the exact command, top three per problem, and the two figures.

    Raises OutputError if the page or a figure is not banditlab's to replace (:func:`check_page`).
    """
    import json

    from agents.experiments.scorecard.analysis import leaders
    from agents.experiments.scorecard.suite import FULL, PROBLEMS, QUICK, SUITE_VERSION

    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    rel = os.path.relpath(figures_folder(page), page.parent)
    scale = QUICK if quick else FULL
    seconds = float(meta["seconds"])
    # The base seed changes every number on the page: the command names it unless it is the default 0.
    seed = int(meta.get("seed", 0))
    command = f"banditlab score --leaderboard{' --quick' if quick else ''}{f' --seed {seed}' if seed else ''} --jobs 2"
    resumed = int(meta.get("resumed_tasks", 0) or 0)
    took = f"{seconds:.0f} s here" + (f" for the tasks left after {resumed} resumed ones" if resumed else "")
    lines = [
        "# Leaderboard",
        "",
        f"Every built-in agent on the scorecard's suite **{SUITE_VERSION}** (docs: [the scorecard](score.md)). "
        "Score 0 = uniform random play, 1 = the best arm from the start; mean over seeds with its 95% interval.",
        "",
        f"**Scale: {scale.name}** ({scale.runs} seeds per problem, {scale.fraction:g} × each problem's full "
        f"horizon), not the full scale of {FULL.runs} seeds at full horizons."
        if quick
        else f"**Scale: full** ({FULL.runs} seeds per problem, full horizons).",
        "",
        f"Regenerate this page with one command (from the repository root; {took}, "
        f"{meta.get('jobs', '?')} job(s), on a 2-core machine shared with other work):",
        "",
        "```bash",
        command,
        "```",
        "",
    ]
    if quick:
        factor = 1.0 / QUICK.fraction
        lines += [
            f"Full scale plays {FULL.runs / QUICK.runs:g}× the seeds at {factor:g}× the horizons. The batched "
            "built-ins' cost grows with the horizon and hardly with the seeds, so it takes roughly "
            f"{factor:g}× this run's time, "
            f"about {seconds * factor / 60:.0f} minutes on the same machine (an estimate; the audits also run 2000 "
            "instead of 500 runs per input).",
            "",
        ]
    lines += ["| problem | first | second | third |", "|---|---|---|---|"]
    for p in PROBLEMS:
        top = leaders(table, p.name)
        cells = [f"{r['agent']} {r['score']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}]" for r in top]
        cells += ["—"] * (3 - len(cells))
        lines.append(f"| {p.name} | {' | '.join(cells)} |")
    lines += [
        "",
        f"![radar: the best built-in and the three best on average]({rel}/figure.png)",
        "",
        f"![regret per problem]({rel}/regret.png)",
        "",
    ]
    write_page_files(page, "\n".join(lines), {name: folder / name for name in FIGURES})

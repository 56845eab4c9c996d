"""Regenerate every recorded fixture of the tests in one command, and say what changed.

    python tests/regenerate_fixtures.py            # every fixture (the quick-scale runs take minutes)
    python tests/regenerate_fixtures.py small elimination   # only fixtures whose name contains a word
    python tests/regenerate_fixtures.py --check    # compare only, write nothing

The fixtures (``tests/fixtures``, described in its README):

* ``experiment-results-small/<experiment>.csv.gz``: ``results.csv`` of each recorded experiment
  at the small scale of ``tests/test_experiment_regression.py``;
* ``experiment-results-quick.json``: fingerprints of the same at ``--quick`` scale;
* ``elimination-sequences.npz``: the elimination agents' runs of ``tests/test_elimination_regression.py``;
* ``graph-trajectories.npz``: the ``GraphBandit-v0`` scenarios of ``tests/test_graph_trajectories.py``.

Each fixture is compared with what the code writes today, as the tests compare it (integers and
identifiers exactly, floats to the tolerance of ``tests/recorded.py``): ``unchanged`` (same
bytes), ``same within tolerance`` (another CPU's rounding; the recorded file is kept, so a run
on another machine changes nothing), ``CHANGED`` (with what differs; rewritten) or ``new``.
Regenerate only when a change of behaviour is intended, and say what changed in the commit.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parent
sys.path[:0] = [str(TESTS.parent), str(TESTS)]

import test_elimination_regression as elimination  # noqa: E402
import test_experiment_regression as experiments  # noqa: E402
import test_graph_trajectories as trajectories  # noqa: E402
from recorded import array_difference, fingerprint, fingerprint_difference, frame_difference, read_csv  # noqa: E402

#: A fixture: its name, its file, and a function that makes its content (bytes) and says how it
#: compares with the recorded bytes (None: within tolerance; else the difference).
Fixture = tuple[str, Path, Callable[[], tuple[bytes, Callable[[bytes], str | None]]]]


def _small(experiment_id: str) -> tuple[bytes, Callable[[bytes], str | None]]:
    with tempfile.TemporaryDirectory() as out:
        data = experiments.small_results(experiment_id, Path(out))
    new = read_csv(data)
    return gzip.compress(data, mtime=0), lambda old: frame_difference(new, read_csv(gzip.decompress(old)))


def _quick() -> tuple[bytes, Callable[[bytes], str | None]]:
    prints = {}
    for experiment_id in experiments.RECORDED:
        print(f"  running {experiment_id} at --quick scale ...", flush=True)
        with tempfile.TemporaryDirectory() as out:
            prints[experiment_id.replace("/", "-")] = fingerprint(
                read_csv(experiments.quick_results(experiment_id, Path(out)))
            )

    def compare(old: bytes) -> str | None:
        recorded = json.loads(old)
        if set(recorded) != set(prints):
            return f"experiments {sorted(prints)} != recorded {sorted(recorded)}"
        differences = [f"{k}: {d}" for k in sorted(prints) if (d := fingerprint_difference(prints[k], recorded[k]))]
        return "; ".join(differences) or None

    return (json.dumps(prints, indent=1, sort_keys=True) + "\n").encode(), compare


def _arrays(arrays: dict[str, np.ndarray]) -> tuple[bytes, Callable[[bytes], str | None]]:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]

    def compare(old: bytes) -> str | None:
        with np.load(io.BytesIO(old)) as recorded:
            if set(recorded.files) != set(arrays):
                return f"{len(set(recorded.files) ^ set(arrays))} keys added or removed"
            differences = [f"{k}: {d}" for k in sorted(arrays) if (d := array_difference(arrays[k], recorded[k]))]
        return f"{len(differences)} arrays differ, first {differences[0]}" if differences else None

    return buffer.getvalue(), compare


def fixtures() -> Iterator[Fixture]:
    """Every fixture, in the order they are regenerated."""
    for experiment_id in experiments.RECORDED:
        path = experiments.SMALL_RESULTS / f"{experiment_id.replace('/', '-')}.csv.gz"
        yield f"small/{experiment_id}", path, lambda e=experiment_id: _small(e)  # type: ignore[misc]
    yield "quick", experiments.QUICK_FINGERPRINTS, _quick
    yield (
        "elimination",
        elimination.FIXTURE,
        lambda: _arrays(
            {f"{key}|{field}": np.asarray(value) for key, out in elimination.cases() for field, value in out.items()}
        ),
    )
    yield "graph-trajectories", trajectories.FIXTURE, lambda: _arrays(trajectories.cases())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("only", nargs="*", help="regenerate only fixtures whose name contains one of these words")
    parser.add_argument("--check", action="store_true", help="compare only; write nothing")
    args = parser.parse_args(argv)
    changed = 0
    for name, path, make in fixtures():
        if args.only and not any(word in name for word in args.only):
            continue
        print(f"{name} ({path.relative_to(TESTS)}):", flush=True)
        data, compare = make()
        if not path.exists():
            verdict, write = "new", True
        elif path.read_bytes() == data:
            verdict, write = "unchanged", False
        elif (difference := compare(path.read_bytes())) is None:
            verdict, write = "same within tolerance (recorded file kept)", False
        else:
            verdict, write = f"CHANGED: {difference}", True
        changed += write
        if write and not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        print(f"  {verdict}{' (not written: --check)' if write and args.check else ''}", flush=True)
    print(f"{changed} fixture(s) new or changed{' (nothing written)' if args.check else ''}.")
    return 1 if changed and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())

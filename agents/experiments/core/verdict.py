"""A check's outcome (:class:`Verdict`) and the one rule that turns 95% intervals into ✓, ✗ or –.

:func:`sided` reads one interval of a difference; :func:`settle` makes one verdict of several
(every setting must hold; an interval containing 0 is undecided below full scale, failed at full
scale). The check classes of :mod:`agents.experiments.core.checks` use these and nothing else.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

#: Marks written next to a verdict.
MARKS = {True: "✓", False: "✗", None: "–"}


#: Where the explanations of ✗ and – verdicts live, from the repository's root.
README = "docs/reproductions/README.md"
#: The same file seen from a committed summary, ``docs/reproductions/<experiment>/summary.md``.
README_FROM_SUMMARY = "../README.md"
#: Anchors of :data:`README` used when a claim names none: a user agent's claims, and the general
#: paragraph on verdicts a run's scale cannot decide.
YOUR_AGENTS = "your-agents"
UNDECIDED = "not-resolvable-at-this-scale"


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: ``holds`` (True, False, or None when it cannot be decided) and the evidence.

    A None verdict is *not resolvable at this scale* (the run has too few runs or too short a
    horizon, or the intervals overlap) unless ``applicable`` is False: then the claim's premise
    does not hold here (e.g. a distance that should shrink is not positive), whatever the scale.
    ``extra`` holds further lines under the claim, e.g. the verdict on settings this project
    added beyond the source's (:func:`added_line`).
    """

    holds: bool | None
    evidence: str
    applicable: bool = True
    extra: tuple[str, ...] = ()


def sided(mean: float, half: float, direction: str) -> bool | None:
    """Where the 95% interval ``mean ± half`` of a difference lies: on the claimed side of 0 (True).

    ``direction`` is ``"<"`` (the claim says the difference is negative) or ``">"``. False when the
    interval lies wholly on the other side (the results contradict the claim), None when it
    contains 0 or cannot be computed (the interval is wider than the effect: undecided).
    """
    if math.isnan(mean) or math.isnan(half):
        return None
    below, above = mean + half < 0, mean - half > 0
    if direction == "<":
        return True if below else (False if above else None)
    return True if above else (False if below else None)


def settle(outcomes: Sequence[bool | None], below_full_scale: bool) -> bool | None:
    """One verdict from per-setting outcomes (:func:`sided`): every setting must hold.

    Any contradicted setting makes the claim fail. Settings whose interval contains 0 make it
    fail at full scale (the claim says *clearly*), but below full scale they leave it undecided
    (None): a shorter horizon or fewer runs cannot tell, and the full-scale run decides.
    """
    if not outcomes:
        return None
    if all(o is True for o in outcomes):
        return True
    if any(o is False for o in outcomes):
        return False
    return None if below_full_scale else False


def tally(outcomes: Sequence[bool | None]) -> str:
    """Words for per-setting outcomes beyond the ones that hold: how many contradict, how many cannot tell."""
    against = sum(o is False for o in outcomes)
    unsure = sum(o is None for o in outcomes)
    parts = []
    if against:
        parts.append(f"the opposite in {against}")
    if unsure:
        parts.append(f"an interval containing 0 in {unsure}")
    return f" ({'; '.join(parts)})" if parts else ""


def why_link(anchor: str) -> str:
    """The Markdown link of a ✗ or – to the paragraph ``anchor`` of :data:`README` that explains it.

    Its target is relative to a committed summary (``docs/reproductions/<experiment>/``); its
    text names the file from the repository's root, so it also reads right in any other folder.
    """
    return f"[why: {README}#{anchor}]({README_FROM_SUMMARY}#{anchor})"


def links_from(folder: Path, text: str) -> str:
    """``text`` (a summary) with its why-links made right for a summary written into ``folder``.

    The links of :func:`why_link` are relative to ``docs/reproductions/<experiment>/``. Elsewhere
    they point at :data:`README` of the repository this package runs from, relative to
    ``folder``; where the package runs without its repository (an installed wheel), the links
    become plain text, which names the file and the paragraph.
    """
    readme = Path(__file__).resolve().parents[3] / README
    if readme.is_file():
        target = Path(os.path.relpath(readme, Path(folder).resolve())).as_posix()
        return text.replace(f"]({README_FROM_SUMMARY}#", f"]({target}#")
    return re.sub(r"\[why: ([^\]]*)\]\(" + re.escape(README_FROM_SUMMARY) + r"#[^)]*\)", r"(why: \1)", text)


def added_line(verdict: Verdict, what: str, anchor: str) -> str:
    """A sub-bullet with the verdict of a claim on settings this project added beyond the source's."""
    link = "" if verdict.holds is True else f" {why_link(anchor)}"
    return f"  - {MARKS[verdict.holds]} *Added by this project, not in the source* ({what}): {verdict.evidence}{link}"

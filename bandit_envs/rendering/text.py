"""The ``"ansi"`` frame: a compact text picture of one copy's episode so far.

Example (``GraphBandit-v0`` after 3 rounds; ``*`` marks the pulled arm, ``+`` the other arms whose
rewards the round showed)::

    GraphBandit-v0  round 3/100000  action 2  reward 0.812  regret so far 0.100
      arm  pulls    obs   mean   true
        0      1      2  0.870  0.871
     *  2      1      3  0.790  0.771
     +  5      0      1  0.640  0.621
    ...

The first line is common to every env; a second line holds the scene's details (the ε, sensitivity
and loss of the budget envs, the user and item of the recommendation envs); then one row per arm
(the :data:`MAX_TEXT_ARMS` most pulled arms when there are more).
"""

from __future__ import annotations

import numpy as np

from bandit_envs.rendering.scenes import Scene
from bandit_envs.rendering.stats import EpisodeStats

#: Most arm rows of a frame: beyond, the most pulled arms (and the pulled one) are listed.
MAX_TEXT_ARMS = 30


def headline(scene: Scene, stats: EpisodeStats, copy: int = 0) -> str:
    """Round, last action, last reward and regret so far of copy ``copy``."""
    t, action = int(stats.t[copy]), int(stats.last_action[copy])
    played = f"action {action}  reward {stats.last_reward[copy]:.3f}" if action >= 0 else "action -  reward -"
    return f"{scene.env_id}  round {t}/{scene.horizon}  {played}  regret so far {stats.regret[copy]:.3f}"


def detail_line(scene: Scene, stats: EpisodeStats, copy: int = 0) -> str:
    """The scene's details of copy ``copy``'s last step ("" before the first step)."""
    action = int(stats.last_action[copy])
    return scene.details(stats.last_info[copy], action) if action >= 0 else ""


def shown_arms(stats: EpisodeStats, copy: int = 0, limit: int = MAX_TEXT_ARMS) -> list[int]:
    """The arms a frame lists: all of them, or the ``limit`` most pulled (ties: lower index) and the last action."""
    k = stats.n_arms
    if k <= limit:
        return list(range(k))
    order = np.lexsort((np.arange(k), -stats.pulls[copy]))[:limit]
    arms = set(order.tolist())
    if stats.last_action[copy] >= 0:
        arms.add(int(stats.last_action[copy]))
    return sorted(arms)


def text_frame(scene: Scene, stats: EpisodeStats, copy: int = 0) -> str:
    """The ``"ansi"`` frame of copy ``copy`` (see the module docstring)."""
    lines = [headline(scene, stats, copy)]
    details = detail_line(scene, stats, copy)
    if details:
        lines.append(details)
    width = max(5, max(len(label) for label in scene.arm_labels))
    header = f"   {scene.arm_header:>{width}}  pulls    obs   mean"
    if scene.expected is not None:
        header += "   true"
    lines.append(header)
    means = stats.means(copy)
    action = int(stats.last_action[copy])
    arms = shown_arms(stats, copy)
    for k in arms:
        mark = "*" if k == action else "+" if stats.last_observed[copy, k] else " "
        mean = "     -" if np.isnan(means[k]) else f"{means[k]:6.3f}"
        counts = f"{stats.pulls[copy, k]:6d} {stats.observations[copy, k]:6d}"
        row = f" {mark} {scene.arm_labels[k]:>{width}} {counts} {mean}"
        if scene.expected is not None:
            row += f" {scene.expected[k]:6.3f}"
        lines.append(row)
    if len(arms) < stats.n_arms:
        lines.append(f"   ({len(arms)} of {stats.n_arms} arms shown: the most pulled)")
    return "\n".join(lines)

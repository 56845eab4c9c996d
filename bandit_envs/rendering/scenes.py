"""What each env family shows in a frame besides the common part: its arms' labels and a detail line.

The common part of every frame is the round, the last action and reward, the regret so far and a
per-arm table (pulls, observations, empirical mean) or its picture. A :class:`Scene` adds what is
particular to a family; the envs build theirs with :func:`graph_scene`, :func:`budget_scene` or
:func:`recommendation_scene` and hand it to their :class:`~bandit_envs.rendering.Renderer`:

* ``GraphBandit-v0`` (the gap paper, §2.1): the feedback graph (drawn with the pulled arm and its
  closed neighbourhood highlighted) and the arms' true means;
* ``PrivacyBudget*-v0`` (the budget paper, §4–7): arms labelled by their budget ε; the detail line
  gives the ε chosen, the sensitivity φ_t of the datum sent, the privacy loss L and the
  recommendation reward R of the step;
* ``*Recommendation-v0`` (Zheng et al., NeurIPS 2020): the detail line gives the round's user and
  the recommended item (a movie id, or the POI id of the chosen candidate and the user's location).

Detail lines are module-level functions (or partials of them), so a scene pickles with its env.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

#: A detail line from a copy's last step: (the kept step-info entries, the action) -> text.
Details = Callable[[dict[str, Any], int], str]


def no_details(info: dict[str, Any], action: int) -> str:
    """No detail line."""
    return ""


@dataclass(frozen=True)
class Scene:
    """What an env shows besides the common part of a frame.

    Attributes
    ----------
    env_id : str
        The env's id (the frame's title).
    horizon : int
        Steps of an episode.
    arm_labels : tuple of str
        One short label per arm (the table's first column, the picture's arm names).
    arm_header : str
        Header of the label column.
    info_keys : tuple of str
        Step-info entries the detail line reads (kept from each copy's last step).
    details : callable
        The detail line, from those entries and the action ("" for none).
    graph : ndarray of bool, optional
        The K×K adjacency of a feedback graph (no self loops): drawn in the picture.
    expected : ndarray of float, optional
        The arms' true means, when the env knows them context-free: shown beside the estimates.
    """

    env_id: str
    horizon: int
    arm_labels: tuple[str, ...]
    arm_header: str = "arm"
    info_keys: tuple[str, ...] = ()
    details: Details = no_details
    graph: npt.NDArray[np.bool_] | None = field(default=None, repr=False)
    expected: npt.NDArray[np.float64] | None = field(default=None, repr=False)

    @property
    def n_arms(self) -> int:
        """Number of arms K."""
        return len(self.arm_labels)


def graph_scene(env_id: str, horizon: int, adjacency: Any, expected: Any) -> Scene:
    """The scene of a graph bandit: its feedback graph and its arms' true means (the gap paper, §2.1)."""
    adjacency = np.asarray(adjacency, dtype=bool)
    labels = tuple(str(k) for k in range(adjacency.shape[0]))
    return Scene(env_id, horizon, labels, graph=adjacency, expected=np.asarray(expected, dtype=np.float64))


def budget_details(info: dict[str, Any], action: int) -> str:
    """ε chosen, sensitivity φ_t, privacy loss L and recommendation reward R of the step (budget paper, eq. 15)."""
    return (
        f"ε {info['epsilon']:.3g}  sensitivity φ {info['sensitivity']:.3f}  "
        f"loss L {info['privacy_loss']:.3f}  recommendation R {info['recommendation_reward']:.3f}"
    )


def budget_scene(env_id: str, horizon: int, budgets: Sequence[float] | npt.NDArray[np.float64]) -> Scene:
    """The scene of a privacy-budget env: arms labelled by their budget ε (the budget paper, §4.2)."""
    return Scene(
        env_id,
        horizon,
        tuple(f"{float(eps):g}" for eps in budgets),
        arm_header="ε",
        info_keys=("epsilon", "sensitivity", "privacy_loss", "recommendation_reward"),
        details=budget_details,
    )


def recommendation_details(info: dict[str, Any], action: int, item_ids: tuple[int, ...] | None = None) -> str:
    """The round's user and the recommended item: a movie id (``item_ids``) or the chosen candidate POI."""
    user = f"user {info['user_id']}"
    if "location_id" in info:
        user += f" at POI {info['location_id']}"
    if item_ids is not None:
        item = f"movie {item_ids[action]}"
    elif "candidate_ids" in info:
        item = f"POI {info['candidate_ids'][action]} (candidate {action})"
    else:
        item = f"arm {action}"
    return f"{user}  item: {item}"


def recommendation_scene(env_id: str, horizon: int, n_arms: int, item_ids: Any = None) -> Scene:
    """The scene of a recommendation env: arms are the data's items (``item_ids``) or candidate slots."""
    if item_ids is not None:
        ids = tuple(int(i) for i in item_ids)
        labels = tuple(f"m{i}" for i in ids)
        keys: tuple[str, ...] = ("user_id",)
        return Scene(env_id, horizon, labels, "movie", keys, partial(recommendation_details, item_ids=ids))
    labels = tuple(f"c{k}" for k in range(n_arms))
    keys = ("user_id", "location_id", "candidate_ids")
    return Scene(env_id, horizon, labels, "slot", keys, recommendation_details)

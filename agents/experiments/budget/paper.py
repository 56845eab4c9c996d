"""The budget paper's numbers (§7.1–7.2): α grids, best α, γ and users per scenario."""

from __future__ import annotations

#: The paper's α grids (§7.2.1); "0.3, 0.4, …, 2" read as steps of 0.1.
ALPHA_GRIDS: dict[tuple[str, str], tuple[float, ...]] = {
    ("movielens", "UCB"): (0.01, 0.02, 0.04, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3)
    + tuple(round(0.4 + 0.1 * i, 2) for i in range(17)),
    ("gowalla", "UCB"): (0.01, 0.02, 0.04, 0.06, 0.08, 0.1) + tuple(round(0.2 + 0.1 * i, 2) for i in range(19)),
    ("movielens", "SM-UCB"): (0.01,) + tuple(round(0.05 * i, 2) for i in range(1, 17)) + (1.0, 1.2),
    ("gowalla", "SM-UCB"): tuple(round(0.02 * i, 2) for i in range(1, 16)) + (0.35, 0.4, 0.45, 0.5),
}

#: The paper's best α (§7.2.1) per scenario and agent.
PAPER_BEST_ALPHA: dict[tuple[str, str], float] = {
    ("movielens", "UCB"): 0.3,
    ("gowalla", "UCB"): 0.05,
    ("movielens", "SM-UCB"): 0.3,
    ("gowalla", "SM-UCB"): 0.1,
}

#: The paper's γ (§7.1.3 (4)) per scenario and agent.
PAPER_GAMMA: dict[tuple[str, str], float] = {
    ("movielens", "UCB"): 1.0,
    ("movielens", "SM-UCB"): 1.0,
    ("gowalla", "UCB"): 1.0,
    ("gowalla", "SM-UCB"): 0.5,
}

#: Users per scenario (§7.1.1: 20 MovieLens test users, 10 Gowalla users).
N_USERS: dict[str, int] = {"movielens": 20, "gowalla": 10}

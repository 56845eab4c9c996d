"""Feedback graphs for graphical bandits (gap paper §2.1): undirected, no self loops stored.

Pulling arm ``a`` reveals the rewards of its closed neighbourhood N(a) = {a} ∪ neighbours(a).
Graphs are held as K×K boolean adjacency matrices without self loops; ``closed_neighbourhoods``
adds the diagonal.
"""

from __future__ import annotations

import numbers
import sys
from typing import Any

import numpy as np
import numpy.typing as npt

from bandit_envs.validation import check_float, check_int, check_memory, masked_array, summarize

#: Bytes per pair of arms of a graph instance: the K×K uniforms drawn for an Erdős–Rényi graph (or
#: the float matrix networkx builds), the boolean adjacency and neighbourhoods, and an env's copy
#: of the neighbourhoods as floats.
BYTES_PER_ARM_PAIR = 20


def check_graph_size(n_arms: int, what: str | None = None) -> None:
    """Refuse a graph of ``n_arms`` nodes whose K×K tables would exceed the memory limit.

    Parameters
    ----------
    n_arms : int
        Number of arms K.
    what : str, optional
        The argument, for the message; default ``"n_arms=K"``.

    Raises
    ------
    ValueError
        If ``BYTES_PER_ARM_PAIR * K**2`` exceeds :func:`bandit_envs.validation.memory_limit`.
    """
    check_memory(
        f"{what or f'n_arms={n_arms}'} ({n_arms}×{n_arms} pairs of arms, {BYTES_PER_ARM_PAIR} bytes each)",
        BYTES_PER_ARM_PAIR * float(n_arms) ** 2,
        "use fewer arms",
    )


def erdos_renyi(n_arms: int, edge_probability: float, seed: int) -> npt.NDArray[np.bool_]:
    """Erdős–Rényi G(K, p) adjacency (gap paper §5): each pair u≠v linked with probability p.

    The graph is drawn from ``numpy.random.default_rng(seed)`` so that an ``instance_seed``
    fixes it independently of the networkx version.
    """
    n_arms = check_int("n_arms", n_arms, minimum=1)
    check_graph_size(n_arms)
    p = check_float("edge_probability", edge_probability, low=0.0, high=1.0)
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n_arms, n_arms)) < p, k=1)
    return upper | upper.T


def as_adjacency(graph: Any, n_arms: int | None = None, name: str = "graph") -> npt.NDArray[np.bool_]:
    """Validate a networkx graph or a square boolean/0-1 matrix and return its adjacency.

    Nodes of a networkx graph must be the integers ``0..K-1``. Self loops, directed graphs,
    asymmetric matrices, masked arrays (``numpy.ma``: their masked entries would be read as
    edges) and a size different from ``n_arms`` are refused, each in one sentence
    that calls the graph ``name`` (the argument as its caller names it: ``"graph"`` for
    ``GraphBandit-v0``, ``"feedback_graph"`` for the agents) and quotes the first offending
    entry. networkx is not imported for a matrix (its import takes a tenth of a second of every
    process): a networkx graph exists only where networkx was imported.
    """
    nx = sys.modules.get("networkx")
    if nx is not None and isinstance(graph, nx.Graph):
        if graph.is_directed():
            raise ValueError(f"{name} must be undirected, got a directed networkx graph.")
        k = graph.number_of_nodes()
        allowed = set(range(k))
        if set(graph.nodes) != allowed:
            odd = next(node for node in graph.nodes if node not in allowed)
            raise ValueError(f"{name} nodes must be the integers 0..{k - 1}, got node {summarize(odd)}.")
        check_graph_size(k, f"a graph of {k} nodes as {name}")
        if nx.number_of_selfloops(graph):
            loop = next(nx.nodes_with_selfloops(graph))
            raise ValueError(
                f"{name} must have no self loops (an arm always observes itself), got "
                f"{nx.number_of_selfloops(graph)} self loop(s), the first at node {summarize(loop)}."
            )
        adj = nx.to_numpy_array(graph, nodelist=range(k), dtype=float) != 0
    else:
        if isinstance(graph, np.ma.MaskedArray):  # np.asarray would read its masked entries as edges
            raise TypeError(f"{name} must be a networkx Graph or a K×K boolean matrix, got {masked_array(graph)}.")
        try:
            arr = np.asarray(graph)
        except Exception:  # noqa: BLE001 - any conversion failure is a type error for the user
            raise TypeError(
                f"{name} must be a networkx Graph or a K×K boolean matrix, got {type(graph).__name__}."
            ) from None
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            given = f"shape {arr.shape}" if isinstance(graph, np.ndarray | list | tuple) else type(graph).__name__
            hint = " (call .toarray() on a sparse matrix)" if hasattr(graph, "toarray") else ""
            raise ValueError(f"{name} must be a networkx Graph or a square K×K adjacency matrix, got {given}{hint}.")
        check_graph_size(arr.shape[0], f"a graph of {arr.shape[0]} nodes as {name}")
        if arr.dtype != np.bool_:
            odd = _first_non_bit(arr)
            if odd is not None:
                (i, j), value = odd
                raise ValueError(
                    f"{name} must be a boolean or 0/1 adjacency matrix, got {name}[{i}, {j}] = {summarize(value)}."
                )
        adj = arr.astype(bool)
        if np.any(np.diag(adj)):
            k = int(np.argmax(np.diag(adj)))
            raise ValueError(
                f"{name} must have no self loops, got {int(np.diag(adj).sum())} on the diagonal, "
                f"the first {name}[{k}, {k}] = {summarize(_plain(arr[k, k]))}."
            )
        if not np.array_equal(adj, adj.T):
            r, c = (int(x) for x in np.unravel_index(int(np.argmax(adj != adj.T)), adj.shape))
            raise ValueError(
                f"{name} must be undirected (a symmetric adjacency matrix), got {name}[{r}, {c}] = "
                f"{summarize(_plain(arr[r, c]))} but {name}[{c}, {r}] = {summarize(_plain(arr[c, r]))}."
            )
    if n_arms is not None and adj.shape[0] != n_arms:
        raise ValueError(f"{name} must have n_arms={n_arms} nodes, got {adj.shape[0]}.")
    if adj.shape[0] < 2:
        raise ValueError(f"{name} must have at least 2 nodes (arms), got {adj.shape[0]}.")
    return adj


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (its repr is the value's), anything else as it is."""
    return value.item() if isinstance(value, np.generic) else value


def _first_non_bit(arr: np.ndarray) -> tuple[tuple[int, ...], Any] | None:
    """The index and value of the first entry of ``arr`` that is not 0, 1 or a bool, or None if there is none."""
    if arr.dtype.kind in "iuf":
        bad = ~np.isin(arr, (0, 1))
        if not bad.any():
            return None
        at = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), arr.shape))
        return at, _plain(arr[at])
    for at, value in np.ndenumerate(arr):  # strings, complex numbers, Python objects
        value = _plain(value)
        if not (isinstance(value, bool) or (isinstance(value, numbers.Real) and value in (0, 1))):
            return tuple(int(i) for i in at), value
    return None


def closed_neighbourhoods(adjacency: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Rows N(a): the adjacency with self loops added."""
    return adjacency | np.eye(adjacency.shape[0], dtype=bool)


def independence_number(adjacency: npt.NDArray[np.bool_]) -> int:
    """Exact independence number α(G) (maximum clique of the complement; fine for K ≲ 60)."""
    import networkx as nx  # imported when used (see as_adjacency)

    comp = nx.complement(nx.from_numpy_array(adjacency.astype(int)))
    return max(len(c) for c in nx.find_cliques(comp))

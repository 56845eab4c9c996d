"""The ``"rgb_array"`` frame: a picture drawn with matplotlib's Agg canvas (and networkx for graphs).

A :class:`Picture` owns one matplotlib figure for the life of its env (no pyplot, no window): its
artists are created once and only updated for each frame (heights, colours, texts, the curve's
data), then the canvas is drawn and copied out as an (H, W, 3) uint8 array. Every frame of a picture
has the same size, :data:`FIGSIZE` at :data:`DPI` (640 × 360 pixels), so frames can be written to a
video or GIF as they come.

Every picture has a header (the round, action, reward and regret so far, then the scene's details)
and the curve of the regret so far. Beside them:

* :class:`GraphPicture` (``GraphBandit-v0``): the feedback graph (the gap paper, §2.1), nodes
  coloured by empirical mean (grey: never observed), the pulled arm ringed in red, the other arms
  of its closed neighbourhood in orange and the edges that showed them in red; each node labelled
  with its empirical mean and ``pulls/observations``;
* :class:`PanelPicture` (the other envs): a bar per arm, its empirical mean, with its pulls above
  it; the pulled arm's bar in red.

Importing this module imports matplotlib: the renderer does so only for ``render_mode="rgb_array"``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import networkx as nx
import numpy as np
import numpy.typing as npt
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from bandit_envs.rendering.scenes import Scene
from bandit_envs.rendering.stats import EpisodeStats
from bandit_envs.rendering.text import detail_line, headline

#: Size of every frame in inches, and its resolution: 640 × 360 pixels.
FIGSIZE = (8.0, 4.5)
DPI = 80
#: Most arms labelled with their statistics (beyond, colours and bars only).
MAX_LABELLED_ARMS = 30
PULLED, OBSERVED, PLAIN, UNSEEN = "tab:red", "tab:orange", "0.35", "0.85"

Frame = npt.NDArray[np.uint8]


class Picture(ABC):
    """One figure redrawn for every frame: header, regret curve and the arms (subclasses)."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.figure = Figure(figsize=FIGSIZE, dpi=DPI)
        self.canvas = FigureCanvasAgg(self.figure)
        self._header = self.figure.text(0.01, 0.98, "", va="top", ha="left", family="monospace", fontsize=9)
        ax = self.figure.add_axes((0.68, 0.14, 0.29, 0.6))
        ax.set_xlabel("round")
        ax.set_title("regret so far", fontsize=10)
        ax.tick_params(labelsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))  # few tick labels: text is most of a frame's cost
        ax.yaxis.set_major_locator(MaxNLocator(5))
        (self._curve,) = ax.plot([], [], color="tab:purple")
        self._regret_ax = ax

    def frame(self, stats: EpisodeStats, copy: int = 0) -> Frame:
        """The picture of copy ``copy``: an (H, W, 3) uint8 array."""
        self._header.set_text(f"{headline(self.scene, stats, copy)}\n{detail_line(self.scene, stats, copy)}")
        steps, values = stats.regret_curve(copy)
        self._curve.set_data(steps, values)
        self._regret_ax.set_xlim(0, max(1, int(steps[-1])))
        self._regret_ax.set_ylim(min(0.0, float(values.min())), max(1e-3, float(values.max()) * 1.05))
        self._draw_arms(stats, copy)
        self.canvas.draw()
        return np.asarray(self.canvas.buffer_rgba())[:, :, :3].copy()

    @abstractmethod
    def _draw_arms(self, stats: EpisodeStats, copy: int) -> None: ...

    def close(self) -> None:
        """Free the figure's artists (the picture is not used again)."""
        self.figure.clear()


class GraphPicture(Picture):
    """The feedback graph with the pulled arm and its observed neighbourhood highlighted (see the module)."""

    def __init__(self, scene: Scene) -> None:
        super().__init__(scene)
        assert scene.graph is not None
        k = scene.n_arms
        graph = nx.from_numpy_array(scene.graph.astype(np.int8))
        layout = nx.circular_layout(graph)
        self._pos = np.array([layout[i] for i in range(k)]).reshape(k, 2)
        self._edges = np.array(list(graph.edges()), dtype=np.int64).reshape(-1, 2)
        ax = self.figure.add_axes((0.0, 0.0, 0.56, 0.84))
        ax.set_xlim(-1.35, 1.35)
        ax.set_ylim(-1.35, 1.35)
        ax.set_aspect("equal")
        ax.set_axis_off()
        self._lines = LineCollection(list(self._pos[self._edges]), colors=UNSEEN, linewidths=1.0, zorder=1)
        ax.add_collection(self._lines)
        size = 420.0 if k <= 15 else max(20.0, 6000.0 / k)
        self._nodes = nx.draw_networkx_nodes(graph, layout, ax=ax, node_size=size, node_color=[UNSEEN] * k)
        self._nodes.set_zorder(2)
        cax = self.figure.add_axes((0.55, 0.12, 0.012, 0.6))
        self._mappable = ScalarMappable(Normalize(0.0, 1.0), "viridis")
        bar = self.figure.colorbar(self._mappable, cax=cax, ticks=[0.0, 0.5, 1.0])
        bar.set_label("empirical mean", fontsize=8)
        bar.ax.tick_params(labelsize=7)
        self._labels = []
        if k <= MAX_LABELLED_ARMS:
            nx.draw_networkx_labels(graph, layout, ax=ax, font_size=8, font_color="white")
            for x, y in self._pos * 1.25:
                self._labels.append(ax.text(x, y, "", ha="center", va="center", fontsize=7, zorder=3))
            ax.text(-1.3, -1.33, "label: mean, pulls/obs", fontsize=7, color="0.3")

    def _draw_arms(self, stats: EpisodeStats, copy: int) -> None:
        means = stats.means(copy)
        action = int(stats.last_action[copy])
        observed = stats.last_observed[copy]
        faces = self._mappable.to_rgba(np.nan_to_num(means))
        faces[np.isnan(means)] = (0.85, 0.85, 0.85, 1.0)
        self._nodes.set_facecolor(faces)
        rings = np.where(observed, OBSERVED, PLAIN).astype(object)
        widths = np.where(observed, 2.5, 0.8)
        if action >= 0:
            rings[action], widths[action] = PULLED, 3.5
        self._nodes.set_edgecolor(list(rings))
        self._nodes.set_linewidth(widths)
        if self._edges.size:
            shown = (self._edges == action).any(axis=1)
            self._lines.set_color(np.where(shown, PULLED, UNSEEN).tolist())
            self._lines.set_linewidth(np.where(shown, 2.5, 1.0).tolist())
        for k, label in enumerate(self._labels):
            mean = "-" if np.isnan(means[k]) else f"{means[k]:.2f}"
            label.set_text(f"{mean}\n{stats.pulls[copy, k]}/{stats.observations[copy, k]}")


class PanelPicture(Picture):
    """A bar per arm (empirical mean, pulls above), the pulled arm's in red (see the module)."""

    def __init__(self, scene: Scene) -> None:
        super().__init__(scene)
        k = scene.n_arms
        ax = self.figure.add_axes((0.08, 0.16, 0.52, 0.58))
        self._bars = ax.bar(np.arange(k), np.zeros(k), color="tab:blue")
        ax.set_xticks(np.arange(k))
        small = k > 10
        ax.set_xticklabels(scene.arm_labels, fontsize=7 if small else 8, rotation=90 if small else 0)
        ax.set_xlabel(scene.arm_header)
        ax.set_title("empirical mean per arm (pulls above)", fontsize=10)
        ax.tick_params(axis="y", labelsize=8)
        ax.yaxis.set_major_locator(MaxNLocator(5))
        ax.axhline(0.0, color="0.5", linewidth=0.6)
        self._bar_ax = ax
        self._counts = [ax.text(i, 0.0, "", ha="center", va="bottom", fontsize=7) for i in range(k)]
        if k > MAX_LABELLED_ARMS:
            self._counts = []

    def _draw_arms(self, stats: EpisodeStats, copy: int) -> None:
        means = stats.means(copy)
        heights = np.nan_to_num(means)
        action = int(stats.last_action[copy])
        for k, bar in enumerate(self._bars):
            bar.set_height(heights[k])
            bar.set_color(PULLED if k == action else "tab:blue")
        lo, hi = min(0.0, float(heights.min())), max(0.0, float(heights.max()))
        pad = 0.12 * (hi - lo) if hi > lo else 1.0
        self._bar_ax.set_ylim(lo - (0.02 * pad if lo < 0 else 0.0), hi + pad)
        for k, text in enumerate(self._counts):
            text.set_position((k, max(heights[k], 0.0)))
            text.set_text(str(stats.pulls[copy, k]))


def picture_for(scene: Scene) -> Picture:
    """The picture of a scene: its feedback graph if it has one, else the panel of bars."""
    return GraphPicture(scene) if scene.graph is not None else PanelPicture(scene)

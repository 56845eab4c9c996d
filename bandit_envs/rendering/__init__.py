"""Render modes of every env of the suite: ``"ansi"``, ``"rgb_array"`` and ``"human"``.

Gymnasium's conventions: ``metadata["render_modes"]`` and ``metadata["render_fps"]``, the
``render_mode`` constructor argument, ``render()`` returning a str (``"ansi"``) or an (H, W, 3)
uint8 array (``"rgb_array"``), and a tuple of the copies' frames for a native vector env. An env
built without a render mode keeps no rendering state and its step is unchanged (one ``is None``
test). Modules, one concept each:

- :mod:`~bandit_envs.rendering.stats`: what an episode has shown so far (pulls, observations,
  empirical means, regret so far), kept only while rendering;
- :mod:`~bandit_envs.rendering.scenes`: what each env family adds (arm labels, a detail line, the
  feedback graph);
- :mod:`~bandit_envs.rendering.text`: the ``"ansi"`` frame;
- :mod:`~bandit_envs.rendering.image`: the ``"rgb_array"`` frame (matplotlib's Agg canvas and
  networkx; imported only when such a frame is asked for);
- :mod:`~bandit_envs.rendering.renderer`: the :class:`Renderer` an env holds when it renders.
"""

from bandit_envs.rendering.renderer import (
    MAX_RENDERED_COPIES,
    RENDER_FPS,
    RENDER_MODES,
    Renderer,
    render_mode_error,
    rendered_copies_error,
)
from bandit_envs.rendering.scenes import Scene, budget_scene, graph_scene, recommendation_scene
from bandit_envs.rendering.stats import EpisodeStats
from bandit_envs.rendering.text import text_frame

__all__ = [
    "MAX_RENDERED_COPIES",
    "RENDER_FPS",
    "RENDER_MODES",
    "EpisodeStats",
    "Renderer",
    "Scene",
    "budget_scene",
    "graph_scene",
    "recommendation_scene",
    "render_mode_error",
    "rendered_copies_error",
    "text_frame",
]

"""The object an env holds when it renders: its episode statistics, its scene and its frames.

An env built with ``render_mode=None`` (the default) holds no :class:`Renderer` and keeps nothing
for rendering: its step pays one ``is None`` test. With a render mode, the env creates one renderer
(Gymnasium's conventions, ``gymnasium.Env.render``):

* ``"ansi"``: ``render()`` returns the text frame (:func:`~bandit_envs.rendering.text.text_frame`);
* ``"rgb_array"``: ``render()`` returns an (H, W, 3) uint8 picture
  (:mod:`~bandit_envs.rendering.image`, one matplotlib figure per env, closed by ``env.close()``);
* ``"human"``: the text frame is printed to standard output at every reset and step (and by
  ``render()``, which returns None): no window is opened.

A native vector env renders each copy (its copies' statistics are updated in one numpy pass per
step) and ``render()`` returns the tuple of the copies' frames, as Gymnasium's vector envs do; this
is allowed for at most :data:`MAX_RENDERED_COPIES` copies.
"""

from __future__ import annotations

from typing import Any

from bandit_envs._types import BoolArray, FloatArray, IntArray
from bandit_envs.rendering.scenes import Scene
from bandit_envs.rendering.stats import EpisodeStats
from bandit_envs.rendering.text import text_frame
from bandit_envs.validation import summarize

#: Render modes of every env of the suite (``metadata["render_modes"]``).
RENDER_MODES: tuple[str, ...] = ("ansi", "human", "rgb_array")
#: Frames per second of a recording (``metadata["render_fps"]``): one round is one frame.
RENDER_FPS = 4
#: Most copies of a native vector env that may render (each copy is one frame per ``render()``).
MAX_RENDERED_COPIES = 64


def render_mode_error(env_id: str, render_mode: Any) -> ValueError | None:
    """The one-sentence error for a ``render_mode`` outside None and :data:`RENDER_MODES`, or None if it is allowed."""
    if render_mode is None or (isinstance(render_mode, str) and render_mode in RENDER_MODES):
        return None
    allowed = ", ".join(repr(mode) for mode in RENDER_MODES)
    return ValueError(f"render_mode of {env_id} must be None or one of {allowed}, got {summarize(render_mode)}.")


def rendered_copies_error(env_id: str, render_mode: str | None, num_envs: int) -> ValueError | None:
    """The one-sentence error for a vector env of more than :data:`MAX_RENDERED_COPIES` rendering copies, or None."""
    if render_mode is None or num_envs <= MAX_RENDERED_COPIES:
        return None
    return ValueError(
        f"render_mode={render_mode!r} needs num_envs <= {MAX_RENDERED_COPIES} for {env_id} (one frame per copy), "
        f"got num_envs={num_envs}; render a few copies, or use render_mode=None."
    )


class Renderer:
    """Statistics and frames of an env that renders (one copy for a single env, ``num_envs`` for a vector env).

    Parameters
    ----------
    mode : str
        One of :data:`RENDER_MODES` (checked by the env).
    scene : Scene
        What the env's family shows (:mod:`~bandit_envs.rendering.scenes`).
    num_envs : int
        Copies rendered.
    """

    def __init__(self, mode: str, scene: Scene, num_envs: int = 1) -> None:
        self.mode = mode
        self.scene = scene
        self.num_envs = num_envs
        self.stats = EpisodeStats(num_envs, scene.n_arms, scene.info_keys)
        self._picture: Any = None  # created by the first rgb_array frame

    def reset(self, which: BoolArray | None = None) -> None:
        """A new episode in the copies ``which`` (all if None); prints the frames in human mode."""
        self.stats.reset(which)
        if self.mode == "human" and which is None:
            self._print()

    def record(self, action: int, reward: float, info: dict[str, Any]) -> None:
        """One step of a single env (from what its ``step`` returns)."""
        self.stats.record(action, reward, info)
        if self.mode == "human":
            self._print()

    def record_batch(self, actions: IntArray, rewards: FloatArray, info: dict[str, Any], restarting: BoolArray) -> None:
        """One step of a vector env: the copies in ``restarting`` start a new episode and play nothing."""
        if restarting.any():
            self.stats.reset(restarting)
        self.stats.record_batch(actions, rewards, info, ~restarting)
        if self.mode == "human":
            self._print()

    def frame(self, copy: int = 0) -> Any:
        """Copy ``copy``'s frame in the renderer's mode (text for ``"ansi"`` and ``"human"``)."""
        if self.mode == "rgb_array":
            if self._picture is None:
                from bandit_envs.rendering.image import picture_for  # matplotlib only when pictures are asked for

                self._picture = picture_for(self.scene)
            return self._picture.frame(self.stats, copy)
        return text_frame(self.scene, self.stats, copy)

    def render(self) -> Any:
        """``env.render()`` of a single env: its frame (None in human mode, after printing it)."""
        if self.mode == "human":
            self._print()
            return None
        return self.frame(0)

    def render_copies(self) -> tuple[Any, ...] | None:
        """``render()`` of a vector env: the tuple of the copies' frames (None in human mode, after printing them)."""
        if self.mode == "human":
            self._print()
            return None
        return tuple(self.frame(i) for i in range(self.num_envs))

    def _print(self) -> None:
        for i in range(self.num_envs):
            prefix = f"[copy {i}] " if self.num_envs > 1 else ""
            print(prefix + text_frame(self.scene, self.stats, i), flush=True)

    def close(self) -> None:
        """Close the figure (a later rgb_array frame would open a new one)."""
        if self._picture is not None:
            self._picture.close()
            self._picture = None

    def __getstate__(self) -> dict[str, Any]:
        """Copies (``copy.deepcopy``, ``pickle``) leave the figure behind: they draw their own when asked."""
        state = self.__dict__.copy()
        state["_picture"] = None
        return state

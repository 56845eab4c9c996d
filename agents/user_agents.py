"""Agents brought by the user: loading ``module:Factory`` / ``file.py:Factory``, building, stepping.

A user agent is any callable that builds an object with the Agent interface (``act`` /
``update`` / ``reset``, optionally ``n_envs``) from the experiment's env, setting and seed::

    def factory(env, setting, seed):            # one copy, one env
        return MyAgent(env.action_space.n, seed=seed)

    def factory(env, setting, seed, n_envs):    # accepts n_envs: N copies on the native vector env
        return MyAgent(env.single_action_space.n, n_envs=n_envs, seed=seed)

A subclass of :class:`agents.base.Agent` may be given directly: it is built as
``cls(n_arms, seed=seed)`` (with ``n_envs=N`` for a batch; a private one also with the setting's
``epsilon=``, :func:`_privacy_argument`); a linear contextual agent
(:class:`agents.linear.base.LinearAgent`) as ``cls(n_features, seed=seed)``, d of the env's
(n_arms, d) feature observations. The family passes the env the agent
will act on (the single env, or the vector env when the factory accepts ``n_envs``), the setting
dict (the setting's parameters, e.g. ``epsilon``) and the run's agent seed. User agents run
through the Gymnasium step API, on the same instances and reward draws as the built-in agents
(common random numbers); built-in agents keep their compiled fast paths.

A reference is pickled as its text (or, for a callable, by reference), so it can run on other
processes or Dask workers: the module or file must be importable there too.

A user agent that fails while a task runs (its factory, ``act``, ``update`` or ``reset`` raises or
calls ``sys.exit``, or ``act`` returns an action outside the env's action space) raises
:class:`AgentFailed` in the task's process, with the round it failed in;
:func:`agents.experiments.core.runner.run_checked` turns that into one
:class:`UserAgentError` sentence naming the agent, the setting, the run and the round, with the
agent's own frames of the traceback (:func:`user_frames`) in ``UserAgentError.frames``. A
KeyboardInterrupt the agent raises itself is such a failure too; one raised by Ctrl-C or SIGTERM
stops the run, its finished tasks saved (:func:`passes_through`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import math
import numbers
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

import agents
import bandit_envs
from agents.base import Agent, PrivateAgent
from agents.linear.base import LinearAgent
from bandit_envs.core import check_action, check_actions
from bandit_envs.validation import not_a_file, summarize, user_path

Factory = Callable[..., Any]


@dataclass(frozen=True)
class UserAgent:
    """A named user agent: ``ref`` is ``"module.path:Factory"``, ``"path/to/file.py:Factory"`` or a callable."""

    name: str
    ref: str | Factory = field(compare=False)
    key: str = ""
    #: Whether ``name`` is final: given, or declared by the class; else the factory's name, which the
    #: name of the agent it builds may replace (:func:`agent_name`).
    named: bool = field(default=True, compare=False)

    def factory(self) -> Factory:
        """The callable (imported on first use in this process)."""
        return load_factory(self.ref) if isinstance(self.ref, str) else self.ref

    def build(
        self, env: Any, setting: Mapping[str, Any], seed: int, n_envs: int | None = None, *, guard: bool = True
    ) -> Any:
        """Build the agent for ``env`` (a vector env if ``n_envs`` is given); check its interface.

        With ``guard`` (as the experiments build it) the agent comes wrapped in a
        :class:`GuardedAgent`, and a factory that raises (or calls ``sys.exit``) raises
        :class:`AgentFailed`; without it, :class:`UserAgentError` and the agent itself.
        """
        factory: Any = self.factory()
        kwargs: dict[str, Any] = {} if n_envs is None else {"n_envs": n_envs}
        agent: Any
        is_class = isinstance(factory, type) and issubclass(factory, Agent)
        if is_class:
            kwargs.update(_privacy_argument(factory, setting))
            size = _size_argument(factory, env)
        try:
            if is_class:
                agent = factory(size, seed=seed, **kwargs)
            else:
                agent = factory(env, dict(setting), seed, **kwargs)
        except BaseException as exc:  # any failure of the user's code, sys.exit included
            if passes_through(exc):
                raise
            if guard:
                raise AgentFailed(self.name, "could not be built", 0, exc) from exc
            raise UserAgentError(failure(self.name, "could not be built", exc) + ".") from exc
        missing = [m for m in ("act", "update", "reset") if not callable(getattr(agent, m, None))]
        if missing:
            raise UserAgentError(
                f"agent {summarize(self.name)} must build an object with act, update and reset methods, got a "
                f"{type(agent).__name__} without {', '.join(missing)}."
            )
        return GuardedAgent(agent, self.name, env) if guard else agent

    def batched(self) -> bool:
        """Whether the factory accepts ``n_envs`` (then one agent plays all copies on the vector env)."""
        return accepts_n_envs(self.factory())


class UserAgentError(ValueError):
    """A user agent that cannot be loaded, built or run; one sentence saying which and why.

    ``frames`` is the agent's own part of the traceback (:func:`user_frames`), ``""`` if none.
    """

    def __init__(self, message: str, frames: str = "") -> None:
        super().__init__(message)
        self.frames = frames

    def __reduce__(self) -> tuple[Any, ...]:  # the frames cross to the process that reports them
        return type(self), (str(self), self.frames)


class TaskTimeout(BaseException):
    """Raised in a task still running after ``--task-timeout`` seconds (its argument).

    Not an Exception, so that an agent's ``except Exception`` does not swallow it.
    """


class InvalidAction(ValueError):
    """An action outside the env's action space, returned by a user agent's ``act``."""


#: What a user agent's code may raise that banditlab may pass on rather than report as the agent's failure:
#: Ctrl-C and banditlab's own interrupts (KeyboardInterrupt subclasses), and a generator's close. A
#: KeyboardInterrupt passes on only where a signal raised it (:func:`passes_through`).
PASS_THROUGH = (KeyboardInterrupt, GeneratorExit)

#: The module whose handler (``catch_interrupts``) notes each Ctrl-C or SIGTERM before it raises.
_BACKENDS = "agents.experiments.core.backends"


def from_signal() -> bool:
    """Whether a KeyboardInterrupt raised in this thread now may come from a signal (Ctrl-C, SIGTERM).

    Python raises a signal's exception in the main thread only, and only where the signal's
    handler raises: a KeyboardInterrupt in any other thread, or in a process that ignores SIGINT
    (banditlab's worker processes), is the code's own. While banditlab's handler is installed in
    this process (:func:`agents.experiments.core.backends.catch_interrupts`, as every command
    that runs a user's code installs it), it notes each signal before it raises, so a
    KeyboardInterrupt with no signal noted is the code's own too. Elsewhere (the Python API
    without that handler, where Ctrl-C raises KeyboardInterrupt) the two cannot be told apart,
    and it counts as a signal.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    noted = _noted_signal()
    if noted is not None:
        return noted
    return signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, signal.SIG_DFL, None)


def _noted_signal() -> bool | None:
    """Whether banditlab's handler noted a stop signal in this process; None where it is not installed."""
    backends = sys.modules.get(_BACKENDS)
    caught = getattr(backends, "_Caught", None)
    handler = getattr(backends, "_on_signal", None)
    if caught is not None and caught.pid == os.getpid() and signal.getsignal(signal.SIGTERM) is handler:
        return caught.signal is not None
    return None


def passes_through(exc: BaseException) -> bool:
    """Whether ``exc``, raised in a user's code, goes on as it is rather than as the agent's failure.

    A generator's close, and a KeyboardInterrupt that a signal raised (Ctrl-C or SIGTERM: the
    run stops, its finished tasks saved; :func:`from_signal`). A KeyboardInterrupt the user's
    code raises itself is its failure, reported like any other exception it raises.

    Once banditlab's handler has noted a stop signal in this process, any other exception is
    taken for it too (raised here as a KeyboardInterrupt): the signal's KeyboardInterrupt can
    surface as another error where compiled code called back into Python when it landed (numba
    unboxing a numpy Generator through ctypes, for one), and the run is stopping anyway.
    """
    if isinstance(exc, GeneratorExit):
        return True
    if isinstance(exc, KeyboardInterrupt):
        return from_signal()
    if _stop_noted():
        raise KeyboardInterrupt from exc
    return False


def _stop_noted() -> bool:
    """Whether banditlab's handler is installed in this process's main thread and has noted a stop signal."""
    return threading.current_thread() is threading.main_thread() and _noted_signal() is True


def optional_attribute(obj: Any, name: str) -> Any:
    """``getattr(obj, name, None)``, and None where reading it raises (a failing property or ``__getattr__``).

    For the attributes banditlab reads from a user's agent only if it has them (``name``,
    ``n_arms``, the privacy statements): one that cannot be read counts as absent.
    """
    try:
        return getattr(obj, name, None)
    except BaseException as exc:  # noqa: BLE001 - the user's code: any failure means "not given"
        if passes_through(exc):
            raise
        return None


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, or a placeholder where the exception's own ``__str__`` fails."""
    try:
        return str(exc)
    except BaseException as error:  # noqa: BLE001 - the user's exception class
        if passes_through(error):
            raise
        return "<its message could not be read>"


def failure(name: str, what: str, exc: BaseException) -> str:
    """``agent 'NAME' WHAT (Type: message)``: how banditlab words a user agent's failure (no period).

    ``sys.exit`` and a task stopped by ``--task-timeout`` are worded as such; the message is
    kept on one line.
    """
    return f"agent {summarize(name)} {what} ({cause_of(exc)})"


@contextlib.contextmanager
def users_code(name: str, what: str) -> Iterator[None]:
    """Run a user agent's code: any failure of it (not an interrupt) becomes one :class:`UserAgentError` sentence.

    ``agent 'NAME' WHAT (cause).``, as :func:`failure` words it; a :class:`UserAgentError` and
    an interrupt (:func:`passes_through`) go on as they are.
    """
    try:
        yield
    except UserAgentError:
        raise
    except BaseException as exc:  # any failure of the user's code, sys.exit included
        if passes_through(exc):
            raise
        raise UserAgentError(failure(name, what, exc) + ".") from exc


def cause_of(exc: BaseException) -> str:
    """What a user's code did, on one line without a final period: ``Type: message``, or ``it called sys.exit(...)``."""
    if isinstance(exc, SystemExit):
        cause = f"it called sys.exit({summarize(exc.code)})"
    elif isinstance(exc, TaskTimeout):
        cause = f"still running after --task-timeout {exc.args[0]:g} s, and stopped"
    elif isinstance(exc, InvalidAction):
        cause = str(exc)
    else:
        text = exception_text(exc)
        cause = f"{type(exc).__name__}: {text}" if text.strip() else type(exc).__name__
    return " ".join(cause.split()).rstrip(".")


#: Folders whose frames are not the user's: this project's packages and the libraries it steps them with.
_NOT_USER = tuple(str(Path(m.__file__).parent) + os.sep for m in (agents, bandit_envs, np, gymnasium) if m.__file__)


def user_frames(exc: BaseException) -> str:
    """The frames of ``exc``'s traceback in the user's code, formatted (``""`` if there are none).

    Frames in the ``agents`` and ``bandit_envs`` packages, numpy, Gymnasium and Python's import
    machinery are left out: what remains is where the user's agent failed.
    """
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith(_NOT_USER) and not f.filename.startswith("<frozen ")
    ]
    if not frames:
        return ""
    if isinstance(exc, TaskTimeout):
        last = f"(stopped here by --task-timeout {exc.args[0]:g} s)"
    else:
        last = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    head = "Traceback (the agent's own frames, most recent call last):\n"
    return head + "".join(traceback.format_list(frames)) + last


class AgentFailed(Exception):
    """A user agent failed in a task (raised in the task's process; see the module docstring).

    ``doing`` says what failed (``"could not be built"``, ``"failed in act"``...), ``round`` the
    round it failed in, counted from 1 (0 while it was built), ``cause`` the exception (whose
    traceback holds the user's frames).
    """

    def __init__(self, name: str, doing: str, round: int, cause: BaseException) -> None:
        super().__init__(name, doing, round)
        self.name, self.doing, self.round, self.cause = name, doing, round, cause

    def sentence(self, where: str, horizon: int) -> str:
        """One sentence (no period): the failure, then ``where`` (the setting and run) and the round."""
        at = f", round {self.round:,} of {horizon:,} (counted from 1)" if self.round else ""
        return f"{failure(self.name, self.doing, self.cause)} in {where}{at}"


class GuardedAgent:
    """A user agent as the experiments step it: counts rounds, reports failures as :class:`AgentFailed`.

    ``act``, ``update`` and ``reset`` call the agent's; an exception or ``sys.exit`` in them, or
    an action ``act`` returns outside ``env``'s action space (:func:`bandit_envs.core.check_action`),
    raises :class:`AgentFailed` with the round. ``act`` returns the checked action (an ``int``, or a
    new integer array for a vector env), never the agent's own object. Other attributes are the agent's.
    """

    def __init__(self, agent: Any, name: str, env: Any) -> None:
        self.agent = agent
        self.name = name
        self.round = 0
        self._n = _n_arms(env)
        self._copies: int | None = getattr(env, "num_envs", None)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.__dict__["agent"], attr)

    def _failed(self, doing: str, exc: BaseException) -> AgentFailed:
        return AgentFailed(self.name, doing, self.round, exc)

    def act(self, *args: Any, **kwargs: Any) -> Any:
        """The agent's action for the next round, checked against the env's action space."""
        self.round += 1
        try:
            action = self.agent.act(*args, **kwargs)
        except BaseException as exc:  # any failure of the user's code, sys.exit included
            if passes_through(exc):
                raise
            raise self._failed("failed in act", exc) from exc
        try:
            # The checked value, not the agent's own object: an agent that returns an array it later
            # edits (e.g. choosing its next arm in place in update) cannot change the action recorded.
            if self._copies is None:
                return check_action(action, self._n)
            return np.array(check_actions(action, self._copies, self._n), copy=True)
        except ValueError as exc:
            raise self._failed("returned an invalid action", InvalidAction(str(exc))) from None

    def update(self, *args: Any, **kwargs: Any) -> Any:
        """The agent's update for this round."""
        try:
            return self.agent.update(*args, **kwargs)
        except BaseException as exc:
            if passes_through(exc):
                raise
            raise self._failed("failed in update", exc) from exc

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        """The agent's reset."""
        try:
            return self.agent.reset(*args, **kwargs)
        except BaseException as exc:
            if passes_through(exc):
                raise
            raise self._failed("failed in reset", exc) from exc


def _n_arms(env: Any) -> int:
    space = getattr(env, "single_action_space", None) or env.action_space
    return int(space.n)


def _privacy_argument(cls: type[Agent], setting: Mapping[str, Any]) -> dict[str, float]:
    """``{"epsilon": ε}`` of the setting for a private Agent subclass whose signature names ``epsilon``, else ``{}``.

    Private means a :class:`~agents.base.PrivateAgent` or a class whose ``plays`` declares
    ``"private"`` or ``"local"`` (the scorecard's capabilities): built without it, such a class
    would play every setting at its own default ε. Only a finite ε is passed; a non-private
    class's ``epsilon`` (an exploration rate, as ε-greedy's) is left alone.
    """
    epsilon = setting.get("epsilon")
    plays = optional_attribute(cls, "plays")
    names = [plays] if isinstance(plays, str) else list(plays) if isinstance(plays, tuple | list) else []
    declared = any(p in ("private", "local") for p in names if isinstance(p, str))
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return {}
    if not (issubclass(cls, PrivateAgent) or declared) or "epsilon" not in params:
        return {}
    if isinstance(epsilon, numbers.Real) and not isinstance(epsilon, bool) and math.isfinite(epsilon):
        return {"epsilon": float(epsilon)}
    return {}


def _size_argument(cls: type[Agent], env: Any) -> int:
    """The first argument an Agent subclass is built with: the env's number of arms, or a linear agent's ``n_features``.

    A :class:`~agents.linear.base.LinearAgent` takes the dimension of the feature vectors (the last
    axis of the env's (n_arms, d) observations), which differs from the number of arms.
    """
    if issubclass(cls, LinearAgent):
        space = getattr(env, "single_observation_space", None) or env.observation_space
        shape = getattr(space, "shape", None)
        if shape is not None and len(shape) == 2:
            return int(shape[-1])
    return _n_arms(env)


def accepts_n_envs(factory: Factory) -> bool:
    """True if ``factory`` names an ``n_envs`` parameter (an Agent subclass always does).

    A bare ``**kwargs`` does not count: such a factory (``make(env, setting, seed, **options)``)
    did not ask for the vector env and would be handed one, with ``env.action_space`` a
    ``MultiDiscrete`` where it reads ``.n``.
    """
    if isinstance(factory, type) and issubclass(factory, Agent):
        return "n_envs" in inspect.signature(factory).parameters
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    return "n_envs" in params


_LOADED: dict[str, Factory] = {}
#: The (modification time in ns, size) of a ``.py`` file when it was imported (by module name), and
#: when each reference to it was loaded (by reference).
_STAMPS: dict[str, tuple[int, int] | None] = {}
#: The ``.py`` file of each reference loaded from one.
_FILES: dict[str, Path] = {}


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def load_factory(ref: str) -> Factory:
    """Import ``module.path:Name`` or ``path/to/file.py:Name``; UserAgentError (one sentence) if impossible.

    A ``.py`` file is imported again once it has changed (its modification time or size), so a
    session that edits the agent's file between runs (a notebook) plays the code the file holds.
    """
    if ref in _LOADED:
        file = _FILES.get(ref)
        if file is None:
            return _LOADED[ref]
        stamp = _stamp(file)  # one stat: builds (one per run, or per audit run) come here
        if stamp is None or stamp == _STAMPS.get(ref):  # unchanged, or gone since: the code imported
            return _LOADED[ref]
    target, sep, attr = ref.rpartition(":")
    if not sep or not target or not attr.isidentifier():
        raise UserAgentError(f"--agent must be module.path:Factory or path/to/file.py:Factory, got {summarize(ref)}.")
    if target.endswith(".py"):
        path = user_path(target)
        if (problem := not_a_file(path)) is not None:
            raise UserAgentError(f"--agent {summarize(ref)}: {problem}.")
        name = "banditlab_user_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
        stamp = _stamp(path)
        module = sys.modules.get(name)
        if module is None or _STAMPS.get(name) != stamp:
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise UserAgentError(f"--agent {summarize(ref)}: {path} cannot be imported as a Python file.")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException as exc:  # sys.exit at import included
                del sys.modules[name]
                if passes_through(exc):
                    raise
                raise UserAgentError(f"--agent {summarize(ref)}: importing {path} failed ({cause_of(exc)}).") from exc
            _STAMPS[name] = stamp
        _STAMPS[ref] = stamp
        _FILES[ref] = path
    else:
        try:
            module = importlib.import_module(target)
        except BaseException as exc:
            if passes_through(exc):
                raise
            # ModuleNotFoundError's text repeats the name, which may be all of a huge --agent value.
            if not isinstance(exc, ModuleNotFoundError):
                reason = cause_of(exc)
            elif exc.name == target:
                reason = "no such module"
            else:
                reason = f"no module named {summarize(exc.name)}"
            raise UserAgentError(
                f"--agent {summarize(ref)}: module {summarize(target)} cannot be imported ({reason})."
            ) from exc
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise UserAgentError(f"--agent {summarize(ref)}: {target} has no callable named {summarize(attr)}.")
    _LOADED[ref] = factory
    return factory


def _ref_key(ref: str | Factory) -> str:
    if isinstance(ref, str):
        target, _, attr = ref.rpartition(":")
        if target.endswith(".py"):
            return f"{user_path(target).resolve()}:{attr}"
        return ref
    return f"{getattr(ref, '__module__', '?')}:{getattr(ref, '__qualname__', repr(ref))}"


def split_name(text: str) -> tuple[str | None, str]:
    """``(NAME, REF)`` of an ``--agent NAME=REF`` text, ``(None, text)`` if it names no agent.

    NAME is the part before the first ``=`` when it is not empty, holds no ``/`` or ``:`` and does
    not end with ``.py``; a text whose ``file.py`` (before the last ``:``) is an existing file is a
    reference as a whole, so a path holding ``=`` still works.
    """
    head, sep, tail = text.partition("=")
    if not sep or not head or "/" in head or ":" in head or os.sep in head or head.endswith(".py"):
        return None, text
    target = text.rpartition(":")[0]
    try:
        whole = target.endswith(".py") and user_path(target).is_file()
    except OSError:  # e.g. a name too long to be a file
        whole = False
    return (None, text) if whole else (head, tail)


def declared_name(factory: Factory) -> str | None:
    """The name a class declares as its string class attribute ``name``, if not :class:`agents.base.Agent`'s default."""
    if not isinstance(factory, type):
        return None
    name = getattr(factory, "name", None)
    return name if isinstance(name, str) and name and name != Agent.name else None


def user_agent(entry: str | Factory | UserAgent | tuple[str, str | Factory], taken: Sequence[str]) -> UserAgent:
    """A :class:`UserAgent` from an ``--agent`` text, a callable, a ``(name, ref)`` pair or a UserAgent.

    The name is the one given (``(name, ref)``, or ``NAME=REF`` text: :func:`split_name`), else
    the ``name`` a class declares (:func:`declared_name`), else the factory's own name (a function
    factory's ``__name__``; :func:`agents.experiments.api.configure` then builds one agent to read
    its ``name``: :func:`agent_name`). ``taken`` are the names already in the comparison; a name
    that was not given and clashes with one of them is qualified by its module, a given one is
    refused. A string reference is resolved at once (so a typo is reported before any work
    starts) and kept as text; a ``.py`` path is made absolute.
    """
    if isinstance(entry, UserAgent):
        return entry
    name: str | None = None
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[0], str):
            raise UserAgentError(f"an agent given as a tuple must be (name, factory), got {summarize(entry)}.")
        name, ref = entry
    elif isinstance(entry, str):
        name, ref = split_name(entry)
    else:
        ref = entry
    if isinstance(ref, str):
        target, _, attr = ref.rpartition(":")
        if target.endswith(".py"):
            ref = f"{user_path(target).resolve()}:{attr}"
        factory = load_factory(ref)
    elif callable(ref):
        factory = ref
    else:
        raise UserAgentError(
            f"an agent must be a built-in name, a callable or module:Factory text, got {summarize(ref)}."
        )
    given = name is not None
    if name is None:
        name = qualified(declared_name(factory) or str(getattr(factory, "__name__", "agent")), ref, taken)
    if name in taken:
        raise UserAgentError(f"agent names must be unique, but {summarize(name)} is given twice.")
    return UserAgent(name=name, ref=ref, key=_ref_key(ref), named=given or declared_name(factory) is not None)


def agent_name(agent: Any) -> str | None:
    """The ``name`` a built agent gives itself (a non-empty string other than Agent's default), if any."""
    name = optional_attribute(agent, "name")
    return name if isinstance(name, str) and name and name != Agent.name else None


def first_setting(settings: Sequence[Mapping[str, Any]], user: UserAgent) -> dict[str, Any]:
    """The first of ``settings`` naming ``user`` as its ``agent`` (a setting per agent), else the first."""
    return dict(next((s for s in settings if s.get("agent") == user.name), settings[0]))


def qualified(name: str, ref: str | Factory, taken: Sequence[str]) -> str:
    """``name``, qualified by the module as the user wrote it (a file by its stem) if it is in ``taken``."""
    if name not in taken:
        return name
    if isinstance(ref, str):
        target = ref.rpartition(":")[0]
        module = Path(target).stem if target.endswith(".py") else target
    else:
        module = str(getattr(ref, "__module__", "user"))
    return f"{module}.{name}"


# ------------------------------------------------------------------------------- stepping


def checkpoint_mask(horizon: int, checkpoints: Sequence[int] | np.ndarray) -> np.ndarray:
    """Boolean mask over rounds 1..T marking the checkpoint rounds."""
    mask = np.zeros(horizon + 1, dtype=bool)
    mask[np.asarray(checkpoints, dtype=np.int64)] = True
    return mask


def check_fits(env: Any, agent: Any) -> None:
    """Refuse an agent whose number of arms differs from the env's, before a run starts.

    An :class:`agents.base.Agent` runs its own :meth:`~agents.base.Agent.check_env`; any other
    object is checked through its ``n_arms`` attribute if it has one (``env.action_space.n``, or
    ``single_action_space.n`` for a vector env). Raises :class:`UserAgentError` (one sentence).
    """
    if isinstance(agent, GuardedAgent):
        agent = agent.agent
    if isinstance(agent, Agent):
        try:
            agent.check_env(env)
        except ValueError as exc:
            raise UserAgentError(f"agent {type(agent).__name__} does not fit the env: {exc}") from None
        return
    n_arms = optional_attribute(agent, "n_arms")
    if isinstance(n_arms, numbers.Integral) and not isinstance(n_arms, bool) and n_arms != _n_arms(env):
        raise UserAgentError(
            f"agent {type(agent).__name__} must have the env's number of arms ({_n_arms(env)}), got n_arms={n_arms}."
        )


def play(
    env: Any, agent: Any, horizon: int, checkpoints: Sequence[int] | np.ndarray, seed: int | Sequence[int] | None
) -> tuple[np.ndarray, np.ndarray]:
    """Step ``agent`` on ``env`` (single or vector) for ``horizon`` rounds after ``reset(seed=seed)``.

    Returns the cumulative regret (sum of ``info["regret"]``) and cumulative reward at the
    checkpoints: arrays of shape (checkpoints,) for a single env, (checkpoints, N) for a vector env.
    Before the first step, :func:`check_fits` refuses an agent whose number of arms differs from
    the env's (:class:`UserAgentError`).
    """
    check_fits(env, agent)
    mask = checkpoint_mask(horizon, checkpoints)
    obs, _ = env.reset(seed=seed)
    n = getattr(env, "num_envs", None)
    regret = np.zeros(()) if n is None else np.zeros(n)
    payoff = np.zeros(()) if n is None else np.zeros(n)
    out_regret, out_payoff = [], []
    for t in range(1, horizon + 1):
        action = agent.act(obs)
        obs, reward, _, _, info = env.step(action)
        # Scored before the agent sees them: its update may edit the reward array or the info dict in place.
        regret = regret + info["regret"]
        payoff = payoff + reward
        agent.update(action, reward, info)
        if mask[t]:
            out_regret.append(np.copy(regret))
            out_payoff.append(np.copy(payoff))
    return np.array(out_regret), np.array(out_payoff)

"""Compiled kernels of Beta-Bernoulli Thompson sampling (:class:`agents.ThompsonSampling`), with a reference.

State per copy b and arm k: the coin counts ``successes[b, k]`` = S and ``failures[b, k]`` = F,
and ``shapes[:, k, b] = (d_S, c_S, d_F, c_F)``, the constants of Marsaglia & Tsang's gamma method
(:func:`agents.common.sampling.gamma_constants`) for the posterior Beta(S + 1, F + 1)'s two gammas,
kept up to date whenever S or F changes, so that a round's K Beta draws cost no square root
(copies on the last axis: :func:`beta_choose` draws one arm's gammas for all copies in one
pass). Draws come from the copies' sampling streams (:mod:`agents.common.sampling`), in this order: at
:func:`beta_choose`, a round of 2K gammas (:meth:`agents.common.sampling.SamplerReference.gammas`:
the first words of all 2K draws, then the further words of the few that need them), per arm in
arm order the gamma of S + 1 then the gamma of F + 1; at an update, one uniform per
observation (the r-coin, in arm order).

:class:`ThompsonReference` is one copy in plain Python with the same draws and arithmetic; it
makes the same choices (``tests/test_index_agents.py``).
"""

from __future__ import annotations

from typing import Any

import llvmlite.binding as llvm
import numba
import numpy as np

from agents.common import sampling
from agents.common.kernels import first_bad, first_bad_observed
from bandit_envs._jit import njit

#: Words per arm of ``shapes`` (d and c of the successes' gamma, then of the failures').
SHAPE_WORDS = 4

_ZERO = np.uint64(0)
_ONE = np.uint64(1)


def new_posteriors(copies: int, n_arms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(successes, failures, shapes) of ``copies`` fresh Beta(1, 1) posteriors over ``n_arms`` arms."""
    successes = np.zeros((copies, n_arms))
    failures = np.zeros((copies, n_arms))
    shapes = np.empty((SHAPE_WORDS, n_arms, copies))
    refresh_all(successes, failures, shapes)
    return successes, failures, shapes


@njit(inline="always")
def refresh(successes, failures, shapes, b, k):  # pragma: no cover
    """Recompute ``shapes[:, k, b]`` from S and F of copy b's arm k."""
    d, c = sampling.shape_constants(successes[b, k] + 1.0)
    shapes[0, k, b] = d
    shapes[1, k, b] = c
    d, c = sampling.shape_constants(failures[b, k] + 1.0)
    shapes[2, k, b] = d
    shapes[3, k, b] = c


@njit(inline="always")
def count_coin(successes, failures, shapes, b, k, one):  # pragma: no cover
    """Add a coin to copy b's arm k (S if ``one``, else F) and recompute that count's constants.

    Branch-free (selects, both counts written, one of them plus 0): the coin is a fair guess for
    the branch predictor, and the batched update of 1000 copies (K = 10) took 7.4-7.6 us with the
    branch against 4.9-5.2 us without it. The values are those of ``S += 1`` (or ``F += 1``) and
    :func:`agents.common.sampling.shape_constants` of the new count + 1, bit for bit (counts are
    non-negative, so adding 0.0 leaves them as they are).
    """
    old_s = successes[b, k]
    old_f = failures[b, k]
    add = 1.0 if one else 0.0
    successes[b, k] = old_s + add
    failures[b, k] = old_f + (1.0 - add)
    d, c = sampling.shape_constants((old_s if one else old_f) + 1.0 + 1.0)
    row = 0 if one else 2
    shapes[row, k, b] = d
    shapes[row + 1, k, b] = c


@njit
def refresh_all(successes, failures, shapes):  # pragma: no cover
    """Recompute every copy's and arm's ``shapes`` (after a reset or a change of S, F)."""
    for b in range(successes.shape[0]):
        for k in range(successes.shape[1]):
            refresh(successes, failures, shapes, b, k)


def _compiler_gathers() -> bool:
    """Whether numba compiles for an Intel processor with AVX-512 (not AMD's ``znver*``): :func:`compile_beta_choose`.

    The processor and features numba compiles for: ``NUMBA_CPU_NAME`` and ``NUMBA_CPU_FEATURES``
    where set, else the host's, as numba takes them.
    """
    try:
        name = getattr(numba.config, "CPU_NAME", None) or llvm.get_host_cpu_name()
        features = getattr(numba.config, "CPU_FEATURES", None)
        if features is None:
            features = llvm.get_host_cpu_features().flatten()
    except RuntimeError:  # a platform whose features LLVM cannot list: not such a processor
        return False
    return "+avx512f" in features.split(",") and not name.startswith("znver")


def compile_beta_choose(tables_apart: bool) -> Any:
    """Thompson sampling's batched choice with one of its two forms of the first-trial loop (``tables_apart``).

    Both draw the same words and make the same trials (``tests/test_sampling.py``). With
    ``tables_apart`` each arm's first trials are made in three loops over the copies: the words
    of X_k and Y_k (the streams' steps, vector instructions), the ziggurat's table entries of
    each word (:func:`agents.common.sampling.ziggurat_entries`, scalar loads), then the trials
    from words and entries (:func:`agents.common.sampling.gamma_trial_on`, vector instructions);
    otherwise in one loop. For an Intel processor with AVX-512, LLVM vectorizes the one loop with
    gather instructions for the table entries, which ran slowly on the 2-core Xeon of
    ``docs/reproductions/README.md``: the first trials of 1,000 copies (K = 10) took 103–115 µs a
    round in one loop and 61–77 µs in three there, and likewise with the models
    ``skylake-avx512``, ``sapphirerapids`` and ``x86-64-v4``. Compiled for processors where LLVM
    does not use gathers (``haswell``, ``skylake``, ``alderlake``, ``znver3``, ``znver4``), one
    loop took 55–73 µs and three 69–81 µs on the same machine. So :data:`beta_choose` takes the
    three loops only where numba compiles for an Intel processor with AVX-512
    (:func:`_compiler_gathers`); a machine compiles only that form.
    """

    @njit(error_model="numpy")
    def beta_choose(shapes, streams, out):  # pragma: no cover
        """Per copy b: argmax over arms of θ_k = X_k / (X_k + Y_k), X_k ~ Gamma(S_k + 1), Y_k ~ Gamma(F_k + 1).

        Arm by arm, one pass over the copies makes each copy's first trial of X_k, then of Y_k (one
        word each, :func:`agents.common.sampling.gamma_trial`, keeping the words: what
        :func:`agents.common.sampling.gamma_pass` does for one gamma; three passes where
        ``tables_apart``, see :func:`compile_beta_choose`), then a second pass takes the
        running argmax over the arms whose θ they decided, branch-free, marking in ``pending`` (bit
        min(k, 63)) the arms they left undecided (θ is NaN). Those are finished afterwards, copy by
        copy: the undecided draws in draw order (:func:`agents.common.sampling.gamma_finish` on the kept
        words, with the stream's further words), each θ then entering the argmax. The first arm
        wins an exact tie (an event of probability about 0 with continuous draws). Each copy's
        stream gives its words in the order of :class:`ThompsonReference`, whatever the passes.

        The X and Y trials share one loop rather than two ``gamma_pass`` calls: 7.1 rather than 7.4 us
        for 100 copies, the same 61 us for 1000 (K = 10, one round). Adding the argmax to that loop
        stops its vectorization (1.8x slower per copy). The work arrays are allocated here: taken
        from the caller, they ran 1000 copies 1.7x slower (the compiler can then no longer tell that
        they do not overlap).
        """
        n_arms, n_copies = shapes.shape[1], shapes.shape[2]
        x = np.empty((n_arms, n_copies))
        y = np.empty((n_arms, n_copies))
        x_words = np.empty((n_arms, n_copies), dtype=np.uint64)
        y_words = np.empty((n_arms, n_copies), dtype=np.uint64)
        widths = np.empty((2, n_copies))  # an arm's table entries (tables_apart): X's row, then Y's
        inner = np.empty((2, n_copies), dtype=np.int32)
        best = np.full(n_copies, -1.0)
        pending = np.zeros(n_copies, dtype=np.uint64)
        sa, sb, sc, sw = streams[0], streams[1], streams[2], streams[3]
        out[:] = 0
        for k in range(n_arms):
            xk, yk, xk_words, yk_words = x[k], y[k], x_words[k], y_words[k]
            d_x, c_x, d_y, c_y = shapes[0, k], shapes[1, k], shapes[2, k], shapes[3, k]
            if tables_apart:
                for b in range(n_copies):  # each copy's word of X_k, then of Y_k
                    xk_words[b] = sampling.step_copy(sa, sb, sc, sw, b)
                    yk_words[b] = sampling.step_copy(sa, sb, sc, sw, b)
                for b in range(n_copies):
                    widths[0, b], inner[0, b] = sampling.ziggurat_entries(xk_words[b])
                    widths[1, b], inner[1, b] = sampling.ziggurat_entries(yk_words[b])
                for b in range(n_copies):
                    value, accepted = sampling.gamma_trial_on(xk_words[b], widths[0, b], inner[0, b], d_x[b], c_x[b])
                    xk[b] = value if accepted else np.nan
                for b in range(n_copies):
                    value, accepted = sampling.gamma_trial_on(yk_words[b], widths[1, b], inner[1, b], d_y[b], c_y[b])
                    yk[b] = value if accepted else np.nan
            else:
                for b in range(n_copies):  # gamma_pass of X_k and of Y_k in one loop
                    word = sampling.step_copy(sa, sb, sc, sw, b)
                    value, accepted = sampling.gamma_trial(word, d_x[b], c_x[b])
                    xk[b] = value if accepted else np.nan
                    xk_words[b] = word
                    word = sampling.step_copy(sa, sb, sc, sw, b)
                    value, accepted = sampling.gamma_trial(word, d_y[b], c_y[b])
                    yk[b] = value if accepted else np.nan
                    yk_words[b] = word
            bit = _ONE << np.uint64(min(k, 63))
            for b in range(n_copies):
                theta = x[k, b] / (x[k, b] + y[k, b])
                better = theta > best[b]
                best[b] = theta if better else best[b]
                out[b] = k if better else out[b]
                pending[b] |= bit if theta != theta else _ZERO
        for b in range(n_copies):
            if pending[b] != _ZERO:
                state = sampling.load(streams, b)
                top, arm = best[b], out[b]
                for k in range(n_arms):
                    if (pending[b] >> np.uint64(min(k, 63))) & _ONE:
                        xk, yk = x[k, b], y[k, b]
                        if xk != xk:
                            xk, state = sampling.gamma_finish(x_words[k, b], state, shapes[0, k, b], shapes[1, k, b])
                        if yk != yk:
                            yk, state = sampling.gamma_finish(y_words[k, b], state, shapes[2, k, b], shapes[3, k, b])
                        theta = xk / (xk + yk)
                        if theta > top or (theta == top and k < arm):
                            top, arm = theta, k
                sampling.store(streams, b, state)
                out[b] = arm

    return beta_choose


#: The batched choice (:func:`compile_beta_choose`) in the form that suits the processor numba compiles for.
beta_choose = compile_beta_choose(_compiler_gathers())


@njit
def coin_update(successes, failures, shapes, actions, rewards, streams):  # pragma: no cover
    """Per copy b, the r-coin of the pulled arm's reward r ∈ [0, 1]: U < r adds to S, else to F.

    Returns :func:`agents.common.kernels.first_bad` of the feedback, changing nothing when it is not -1.
    """
    bad = first_bad(actions, rewards, successes.shape[1])
    if bad >= 0:
        return bad
    u = np.empty(actions.shape[0])
    sampling.uniform_pass(streams, u)  # the copies' uniforms first, then the coins
    for b in range(actions.shape[0]):
        count_coin(successes, failures, shapes, b, actions[b], u[b] < rewards[b])
    return -1


@njit
def coin_update_observed(successes, failures, shapes, actions, rewards, mask, observed, streams):  # pragma: no cover
    """Per copy b, an r-coin for every revealed arm (``mask[b, k]``), in arm order (TS-N).

    Returns -1, or the first refused copy, changing nothing: b for its action or reward
    (:func:`agents.common.kernels.first_bad`), else ``OBSERVED_REFUSED - b`` for an observed reward
    not in [0, 1] (:func:`agents.common.kernels.first_bad_observed`), the codes of
    :func:`agents.common.kernels.kernel_error`.
    """
    bad = first_bad(actions, rewards, successes.shape[1])
    if bad >= 0:
        return bad
    bad = first_bad_observed(mask, observed, 0.0, 1.0)
    if bad != -1:
        return bad
    for b in range(mask.shape[0]):
        state = sampling.load(streams, b)
        for k in range(mask.shape[1]):
            if mask[b, k]:
                u, state = sampling.uniform(state)
                count_coin(successes, failures, shapes, b, k, u < observed[b, k])
        sampling.store(streams, b, state)
    return -1


# One env: scalars in, an int out, each called through its compiled entry point
# (:class:`agents.base.SingleEnvKernel`), without the batched kernels' work arrays. Each draws
# exactly the words that the batched kernel above draws for a batch of one copy, and chooses the
# same arm (``tests/test_index_agents.py`` compares them).


@njit(inline="always")
def _beta_trials(shapes, k, state):  # pragma: no cover
    """One env, arm k: the first gamma trials of X_k and Y_k from two words of ``state``.

    Returns ``(x, x_done, x_word, y, y_done, y_word, state)`` (:func:`agents.common.sampling.gamma_trial`;
    the words are kept for :func:`agents.common.sampling.gamma_finish`).
    """
    x_word, state = sampling.next_word(state)
    x, x_done = sampling.gamma_trial(x_word, shapes[0, k, 0], shapes[1, k, 0])
    y_word, state = sampling.next_word(state)
    y, y_done = sampling.gamma_trial(y_word, shapes[2, k, 0], shapes[3, k, 0])
    return x, x_done, x_word, y, y_done, y_word, state


@njit(error_model="numpy")
def beta_choose_one(shapes, streams):  # pragma: no cover
    """:func:`beta_choose` of one env (``shapes`` (4, K, 1), ``streams`` (4, 1)): the arm.

    The same round of draws: arm by arm, the first trial of X_k then of Y_k, one word each
    (:func:`agents.common.sampling.gamma_trial`), the running argmax over the arms both decided (strict
    ``>``, so the first arm wins a tie); then, for the arms left undecided, in arm order, X_k
    and Y_k finished (:func:`agents.common.sampling.gamma_finish`) with the stream's further words,
    each θ_k entering the argmax (ties to the lower arm). Instead of keeping every trial's word
    in work arrays, the finishing pass draws the round's first words again from the stream
    state the round started with (SFC64 is a deterministic recursion): the same words, so the
    same trials.
    """
    n_arms = shapes.shape[1]
    start = sampling.load(streams, 0)
    state = start
    best, arm = -1.0, 0
    pending = False
    for k in range(n_arms):
        x, x_done, _, y, y_done, _, state = _beta_trials(shapes, k, state)
        if x_done and y_done:
            theta = x / (x + y)
            if theta > best:
                best, arm = theta, k
        else:
            pending = True
    if pending:
        again = start
        for k in range(n_arms):
            x, x_done, x_word, y, y_done, y_word, again = _beta_trials(shapes, k, again)
            if x_done and y_done:
                continue
            if not x_done:
                x, state = sampling.gamma_finish(x_word, state, shapes[0, k, 0], shapes[1, k, 0])
            if not y_done:
                y, state = sampling.gamma_finish(y_word, state, shapes[2, k, 0], shapes[3, k, 0])
            theta = x / (x + y)
            if theta > best or (theta == best and k < arm):
                best, arm = theta, k
    sampling.store(streams, 0, state)
    return arm


@njit
def coin_step_choose(successes, failures, shapes, streams, mark, action, reward, pending):  # pragma: no cover
    """One env's TS step: the pulled arm's r-coin (:func:`coin_update` of row 0), then :func:`beta_choose_one`.

    Returns the next round's arm, or -1 if the feedback is refused (nothing changed, nothing
    drawn). The stream's state between the coin and the choice's draws is kept in ``mark``
    (4, 1): with ``pending`` (the arm this call chose last time was never played) the stream
    first goes back there, so that the coin is drawn where it would have been without that
    choice; the caller does the same (``streams[:] = mark``) before any other draw. Either
    way, the words drawn are those of a copy that draws at each act and update (the batched
    kernels), in the same order.
    """
    if action < 0 or action >= successes.shape[1] or not (0.0 <= reward <= 1.0):
        return -1
    state = sampling.load(mark, 0) if pending else sampling.load(streams, 0)
    u, state = sampling.uniform(state)
    sampling.store(streams, 0, state)
    sampling.store(mark, 0, state)
    count_coin(successes, failures, shapes, 0, action, u < reward)
    return beta_choose_one(shapes, streams)


@njit
def coin_step_observed(successes, failures, shapes, streams, mask, observed):  # pragma: no cover
    """:func:`coin_update_observed` of one env (``mask``, ``observed`` of shape (K,)): 0 if refused, else -1.

    Refused, changing nothing and drawing nothing: an observed reward outside [0, 1] (or NaN)
    where ``mask`` is True, which the checked path then names. Otherwise an r-coin for every
    revealed arm, in arm order, from one uniform each, exactly as the batched kernel for row 0.
    """
    for k in range(mask.shape[0]):
        if mask[k] and not (0.0 <= observed[k] <= 1.0):
            return 0
    state = sampling.load(streams, 0)
    for k in range(mask.shape[0]):
        if mask[k]:
            u, state = sampling.uniform(state)
            count_coin(successes, failures, shapes, 0, k, u < observed[k])
    sampling.store(streams, 0, state)
    return -1


class ThompsonReference:
    """One copy of :class:`agents.ThompsonSampling` in plain Python (copy seed ``seed``).

    ``act() -> int``; ``update(arm, reward)`` for TS, ``update_observed(mask, observed)`` for TS-N.
    """

    def __init__(self, n_arms: int, seed: int) -> None:
        self.draws = sampling.SamplerReference(seed)
        self.successes = [0.0] * n_arms
        self.failures = [0.0] * n_arms

    def act(self) -> int:
        """The argmax of a round of Beta samples (first arm on an exact tie)."""
        thetas = self.draws.betas([(s + 1.0, f + 1.0) for s, f in zip(self.successes, self.failures, strict=True)])
        best, arm = -1.0, 0
        for k, theta in enumerate(thetas):
            if theta > best:
                best, arm = theta, k
        return arm

    def _coin(self, arm: int, reward: float) -> None:
        if self.draws.uniform() < reward:
            self.successes[arm] += 1.0
        else:
            self.failures[arm] += 1.0

    def update(self, arm: int, reward: float) -> None:
        """Toss the pulled arm's r-coin."""
        self._coin(arm, reward)

    def update_observed(self, mask: np.ndarray, observed: np.ndarray) -> None:
        """Toss an r-coin per revealed arm, in arm order."""
        for k in np.flatnonzero(mask):
            self._coin(int(k), float(observed[k]))

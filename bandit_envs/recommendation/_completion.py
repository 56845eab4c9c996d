"""Rating-matrix completions and the product features of Zheng et al.'s MovieLens environment.

* :func:`authors_completion`: the authors' ``src/dataset.py`` (MIFA-Lab/LDPbandit2020 @2f0f231):
  unrated entries are the worst normalized rating −1, then a rank-d truncated SVD.
* :func:`als_completion`: a rank-d completion fitted on the observed entries only (ALS-WR), so
  missing entries are predicted from the user's and the movie's other ratings, not set to −1.
* :func:`product_features`: x_ij = u_i ⊙ v_j from the SVD of the completed matrix, with the
  singular values either in θ* (the authors' choice) or split between the two factors.
"""

from __future__ import annotations

import numpy as np

from bandit_envs._types import FloatArray

#: The authors' rating normalization r -> 0.4 (r - 2.5): 1..5 stars -> [-0.6, 1], unrated (0) -> -1.
RATING_SCALE = 0.4
RATING_OFFSET = 2.5
#: ALS stops when no fitted entry moves by more than this, or after ``ALS_MAX_ITERATIONS`` sweeps.
ALS_TOLERANCE = 1e-5
ALS_MAX_ITERATIONS = 500
#: Rewards beyond [-1, 1] by more than rounding are clipped and counted.
CLIP_TOLERANCE = 1e-9
#: Singular directions of a completed matrix weaker than this fraction of its largest are dropped
#: from the features (:func:`product_features`).
SINGULAR_TOLERANCE = 1e-6


def normalize_ratings(stars: FloatArray) -> FloatArray:
    """The authors' map 0.4 (r - 2.5); NaN (unrated) stays NaN."""
    return RATING_SCALE * (stars - RATING_OFFSET)


def truncated_svd(matrix: FloatArray, rank: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(U, s, V) of the rank-``rank`` truncated SVD: ``matrix ≈ U diag(s) V^T``, U and V orthonormal columns."""
    u, s, vh = np.linalg.svd(matrix, full_matrices=False)
    return u[:, :rank], s[:rank], vh[:rank].T


def authors_completion(normalized: FloatArray, rank: int) -> FloatArray:
    """Unrated (NaN) entries set to -1, then the rank-``rank`` SVD reconstruction (exact at full rank)."""
    u, s, v = truncated_svd(np.where(np.isnan(normalized), -1.0, normalized), rank)
    return (u * s) @ v.T


def als_completion(normalized: FloatArray, rank: int, regularization: float) -> FloatArray:
    """Rank-``rank`` completion fitted on the observed (non-NaN) entries only.

    The model is ``mu + a_i^T b_j`` with mu the mean observed rating and rank - 1 factors (so the
    completion has rank at most ``rank``), fitted by alternating least squares with the weighted
    ridge penalty of ALS-WR (Zhou, Wilkinson, Schreiber, Pan, AAIM 2008)::

        sum_observed (y_ij - mu - a_i^T b_j)^2 + lambda (sum_i n_i |a_i|^2 + sum_j m_j |b_j|^2)

    with n_i, m_j the rating counts of user i and movie j. The penalty shrinks unknown entries
    towards mu, the observed mean, never towards the worst rating. The movie factors start from the
    truncated SVD of the residuals with unknown entries 0 (V √s), so the fit is deterministic.
    """
    observed = ~np.isnan(normalized)
    mu = float(normalized[observed].mean())
    residual = np.where(observed, normalized - mu, 0.0)
    weight = observed.astype(np.float64)
    n_factors = rank - 1
    if n_factors == 0:
        return np.full(normalized.shape, mu)
    _, s, v = truncated_svd(residual, n_factors)
    movies = v * np.sqrt(s)
    fitted = np.zeros(normalized.shape)
    for _ in range(ALS_MAX_ITERATIONS):
        users = _ridge_rows(weight, residual, movies, regularization)
        movies = _ridge_rows(weight.T, residual.T, users, regularization)
        new = users @ movies.T
        done = np.abs(new - fitted).max() < ALS_TOLERANCE
        fitted = new
        if done:
            break
    return mu + fitted


def _ridge_rows(weight: FloatArray, target: FloatArray, factors: FloatArray, regularization: float) -> FloatArray:
    """Solve, for every row i, (sum_j w_ij f_j f_j^T + lambda n_i I) a_i = sum_j w_ij t_ij f_j."""
    k = factors.shape[1]
    outer = (factors[:, :, None] * factors[:, None, :]).reshape(factors.shape[0], k * k)
    gram = (weight @ outer).reshape(-1, k, k)
    counts = np.maximum(weight.sum(axis=1), 1.0)
    gram += regularization * counts[:, None, None] * np.eye(k)
    return np.asarray(np.linalg.solve(gram, (target @ factors)[:, :, None])[:, :, 0], dtype=np.float64)


def product_features(completed: FloatArray, rank: int, singular_values: str) -> tuple[FloatArray, FloatArray]:
    """Features (n_users, n_movies, rank) and θ* with ``features @ θ*`` = the rank-``rank`` SVD of ``completed``.

    With ``completed ≈ U diag(s) V^T`` (rank ``rank``): ``"theta"`` (the authors' code) gives
    x_ij = U_i ⊙ V_j and θ* = s; ``"features"`` gives x_ij = (U_i √s) ⊙ (V_j √s) = U_i ⊙ V_j ⊙ s
    and θ* = 1, so a feature vector's sum is the completed rating. Both are then divided by
    c = max(1, max ‖x_ij‖) and θ* multiplied by c, which keeps ‖x‖ <= 1 without changing x^T θ*
    (with "theta" ‖U_i ⊙ V_j‖ <= ‖U_i‖ max_k |V_jk| <= 1 already, so c = 1 up to rounding).

    A direction whose singular value is below :data:`SINGULAR_TOLERANCE` times the largest gets
    zero features (and θ*_k = 0 with "theta"). The completed matrix does not determine it: the ALS completion
    (:func:`als_completion`, stopped at changes of :data:`ALS_TOLERANCE`) leaves a rank-10 fit with
    singular values down to 1e-15 on MovieLens, and the singular vectors of such a near-null space
    are whatever the LAPACK build returns; they differ between CPUs (OpenBLAS picks its kernels at
    run time), and so would the features and every agent's run. The rewards ``features @ θ*``
    change by at most those singular values.
    """
    u, s, v = truncated_svd(completed, rank)
    if s.size and s[0] > 0.0:
        weak = s < SINGULAR_TOLERANCE * s[0]
        u, s, v = u.copy(), s.copy(), v.copy()
        u[:, weak], v[:, weak], s[weak] = 0.0, 0.0, 0.0
    features = u[:, None, :] * v[None, :, :]
    theta = s.copy()
    if singular_values == "features":
        features = features * s
        theta = np.ones_like(s)
    scale = max(1.0, float(np.sqrt(np.einsum("umk,umk->um", features, features).max())))
    return features / scale, theta * scale


def clip_rewards(completed: FloatArray) -> tuple[FloatArray, int]:
    """The completed ratings clipped to [-1, 1], and how many lay outside by more than rounding."""
    outside = int(np.count_nonzero(np.abs(completed) > 1.0 + CLIP_TOLERANCE))
    return np.clip(completed, -1.0, 1.0), outside

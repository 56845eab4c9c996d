"""Argument checks shared by environments, agents and the CLI.

Every check raises ``ValueError`` or ``TypeError`` with one sentence that names the argument,
the value given and what is allowed.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np


def check_int(name: str, value: Any, *, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is an integer not below ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__}).")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def check_float(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite ``float`` inside the given interval."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__}).")
    v = float(value)
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    interval = f"{'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"
    bad = not math.isfinite(v)
    if low is not None:
        bad |= v <= low if low_open else v < low
    if high is not None:
        bad |= v >= high if high_open else v > high
    if bad:
        raise ValueError(f"{name} must be a finite number in {interval}, got {value!r}.")
    return v


def check_choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``allowed``."""
    options = list(allowed)
    if value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}.")
    return value


def check_unit_array(name: str, value: Any, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Return ``value`` as a float64 array with entries in [0, 1] (and the given shape)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of numbers in [0, 1], got {type(value).__name__}.") from None
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers in [0, 1], but it has NaN or inf.")
    if arr.size and (arr.min() < 0.0 or arr.max() > 1.0):
        raise ValueError(f"{name} must contain numbers in [0, 1], got values in [{arr.min():g}, {arr.max():g}].")
    return arr

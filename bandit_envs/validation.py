"""Argument checks shared by environments, agents and the CLI.

Every check raises ``ValueError`` or ``TypeError`` with one sentence that names the argument,
the value given and what is allowed. A value is quoted in a message through :func:`summarize`,
so a message never holds a whole array or a long string.

Sizes. Arguments that set how much memory is allocated (numbers of arms, copies, samples, rounds)
are checked with :func:`check_memory` before anything is allocated: an estimate of the bytes
needed above :func:`memory_limit` (half of the physical memory, or ``$BANDIT_ENVS_MEMORY_LIMIT``)
is refused with one sentence that states the estimate and the limit, instead of a
``MemoryError`` (or swapping) later.
"""

from __future__ import annotations

import math
import numbers
import os
import reprlib
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

#: Environment variable that sets :func:`memory_limit` (a number of bytes, e.g. ``8e9``).
MEMORY_LIMIT_ENV_VAR = "BANDIT_ENVS_MEMORY_LIMIT"
#: :func:`memory_limit` where the physical memory cannot be read.
DEFAULT_MEMORY_LIMIT = 4 * 2**30

_SHORT = reprlib.Repr()
_SHORT.maxstring = 60
_SHORT.maxother = 60
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxset = _SHORT.maxdict = 6
#: Characters of a long string (or bytes) that :func:`summarize` quotes, before its length.
_STRING_PREFIX = 80
#: Characters of a path that a message shows before its length (:func:`not_a_file`).
PATH_SHOWN = 200


def summarize(value: Any) -> str:
    """A short description of ``value`` for an error message: never a whole array or a long string.

    Parameters
    ----------
    value : Any
        What the user gave.

    Returns
    -------
    str
        ``repr(value)`` for a short value; for a numpy array of more than one element its dtype
        and shape (``"a float64 array of shape (3, 4)"``); for a masked array its shape (``"a
        masked array of shape (3,)"``); for a string (or bytes) of more than 80 characters the
        repr of its first 80 and its length (``"'abc...' (100000 characters)"``); otherwise a repr
        cut to about 60 characters with ``...``; an int of more digits than Python writes out
        (``sys.get_int_max_str_digits()``) by its sign and its number of digits.
    """
    if isinstance(value, np.ma.MaskedArray):  # its repr spans lines
        return f"a masked array of shape {value.shape}"
    if isinstance(value, np.ndarray) and value.size > 1:
        return f"a {value.dtype} array of shape {value.shape}"
    if isinstance(value, str | bytes):
        if len(value) <= _STRING_PREFIX:
            return repr(value)
        head = repr(value[:_STRING_PREFIX])
        return f"{head[:-1]}...{head[-1]} ({len(value)} {'characters' if isinstance(value, str) else 'bytes'})"
    try:
        return _SHORT.repr(value)
    except ValueError:  # an int too long to be written out: say how long
        if not isinstance(value, int):
            raise
        digits = int(math.log10(abs(value))) + 1  # exact but where the logarithm rounds across an integer
        return f"{'a negative' if value < 0 else 'an'} integer of about {digits:,} digits"


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units, e.g. ``"41.9 GiB"`` (``"inf TiB"`` for an int past the floats)."""
    try:
        n = float(n)
    except OverflowError:  # a count of 10**400 copies, say: beyond any memory
        n = math.inf
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            if unit == "B":
                return f"{n:.0f} {unit}"
            return f"{n:.1f} {unit}" if abs(n) < 1e5 else f"{n:.2g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def memory_limit() -> int:
    """The largest allocation (bytes) that the size arguments of an env may ask for.

    Returns
    -------
    int
        ``$BANDIT_ENVS_MEMORY_LIMIT`` if set (a number of bytes); else half of the physical
        memory (``os.sysconf``); else :data:`DEFAULT_MEMORY_LIMIT` (4 GiB).

    Raises
    ------
    ValueError
        If ``$BANDIT_ENVS_MEMORY_LIMIT`` is not a positive number.
    """
    text = os.environ.get(MEMORY_LIMIT_ENV_VAR)
    if text:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"${MEMORY_LIMIT_ENV_VAR} must be a positive number of bytes, got {summarize(text)}.")
        return int(value)
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not on POSIX
        return DEFAULT_MEMORY_LIMIT
    return physical // 2 if physical > 0 else DEFAULT_MEMORY_LIMIT


def check_memory(what: str, nbytes: float, remedy: str) -> None:
    """Refuse arguments whose allocation would exceed :func:`memory_limit`.

    Parameters
    ----------
    what : str
        The arguments and what they allocate, completing "<what> would need about 42.0 GiB", e.g.
        ``"num_envs=1000000000 copies (about 1.9 KiB each)"``.
    nbytes : float
        The estimated allocation in bytes.
    remedy : str
        What to change, e.g. ``"use fewer copies"``.

    Raises
    ------
    ValueError
        One sentence with the estimate, the limit and where the limit comes from.
    """
    limit = memory_limit()
    if nbytes > limit:
        source = f"${MEMORY_LIMIT_ENV_VAR}" if os.environ.get(MEMORY_LIMIT_ENV_VAR) else "half of the physical memory"
        try:
            size = f"about {format_bytes(nbytes)}" if math.isfinite(nbytes) else "more bytes than a float counts"
        except OverflowError:  # an int past the floats
            size = "more bytes than a float counts"
        raise ValueError(
            f"{what} would need {size}, more than the limit of {format_bytes(limit)} "
            f"({source}; ${MEMORY_LIMIT_ENV_VAR} in bytes changes it); {remedy}."
        )


def shorten(text: str, limit: int = _STRING_PREFIX) -> str:
    """``text`` itself if it has at most ``limit`` characters, else its first ``limit``, ``...`` and its length."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def not_a_file(path: Any) -> str | None:
    """Why ``path`` cannot be read as a file, as a clause naming it, or None if it can.

    Parameters
    ----------
    path : str or os.PathLike
        The path the user gave.

    Returns
    -------
    str or None
        None for a regular file (or a link to one); else the path (cut to :data:`PATH_SHOWN`
        characters) followed by ``"does not exist"``, ``"is a folder, not a file"``, ``"is a FIFO
        (named pipe), not a regular file"``, ``"is not a regular file (a socket or device)"`` or
        ``"cannot be read (PermissionError)"``.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        why = "does not exist"
    except (OSError, ValueError) as exc:  # e.g. a parent folder that may not be searched, a name too long
        why = f"cannot be read ({type(exc).__name__})"
    else:
        if stat.S_ISREG(mode):
            return None
        if stat.S_ISDIR(mode):
            why = "is a folder, not a file"
        elif stat.S_ISFIFO(mode):
            why = "is a FIFO (named pipe), not a regular file"
        else:
            why = "is not a regular file (a socket or device)"
    return f"{shorten(os.fsdecode(path), PATH_SHOWN)} {why}"


def user_path(value: str | os.PathLike[str]) -> Path:
    """``value`` as a path, a leading ``~`` (or ``~user``) expanded to the home folder as a shell expands it.

    A ``~`` the shell left as it is (``--out=~/x``, a quoted ``'~/x'``, a path from Python) would
    otherwise name a folder ``~`` in the current folder, while pandas and matplotlib, which write
    banditlab's files, expand it: the files would go elsewhere. Where the home folder is unknown
    the path stays as it is (as those libraries leave it).
    """
    return Path(os.path.expanduser(os.fspath(value)))


def check_int(name: str, value: Any, *, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is an integer (not a bool) not below ``minimum``."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {summarize(value)} ({type(value).__name__}).")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {summarize(value)}.")
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
    """Return ``value`` as a finite ``float`` inside the given interval (bools are refused)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {summarize(value)} ({type(value).__name__}).")
    try:
        v = float(value)
    except OverflowError:  # an int too large for a float: out of any finite interval
        v = math.inf
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    interval = f"{'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"
    bad = not math.isfinite(v)
    if low is not None:
        bad |= v <= low if low_open else v < low
    if high is not None:
        bad |= v >= high if high_open else v > high
    if bad:
        raise ValueError(f"{name} must be a finite number in {interval}, got {summarize(value)}.")
    return v


def check_choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``allowed``."""
    options = list(allowed)
    try:
        known = not (isinstance(value, np.ndarray) and value.ndim) and bool(value in options)
    except (TypeError, ValueError):  # e.g. an object whose == does not give a truth value
        known = False
    if not known:
        raise ValueError(f"{name} must be one of {options}, got {summarize(value)}.")
    return value


#: What a refused array holds, by its dtype's kind, for :func:`real_array`'s message.
_NOT_REAL = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes", "M": "dates", "m": "time spans"}


def real_array(
    name: str, value: Any, allowed: str = "an array of real numbers", *, booleans: bool = True
) -> np.ndarray:
    """Return ``value`` as a float64 array; anything but real numbers is refused, never cast.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : Any
        What the user gave.
    allowed : str
        What is allowed, completing "<name> must be ...", e.g. ``"an array of numbers in [0, 1]"``.
    booleans : bool
        Whether booleans are taken as 0.0 and 1.0 (True) or refused (False: for values such as
        rewards or budgets, of which a boolean is never one).

    Raises
    ------
    TypeError
        If ``value`` does not convert to an array of real numbers: complex numbers (numpy would
        drop their imaginary parts with only a warning), strings (numpy would parse ``"0.5"``),
        booleans where ``booleans`` is False, an object array holding anything but real
        numbers (the first such entry is quoted), and a masked array (``numpy.ma.MaskedArray``,
        whose masked entries numpy would read as numbers).
    """
    if isinstance(value, np.ma.MaskedArray):  # numpy would read its masked entries as numbers
        raise TypeError(f"{name} must be {allowed}, got {masked_array(value)}.")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # e.g. ragged nested lists
        raise TypeError(f"{name} must be {allowed}, got {type(value).__name__}.") from None
    kind = arr.dtype.kind
    if kind in "iuf" or (kind == "b" and booleans):
        if not booleans and kind != "b" and isinstance(value, list | tuple):
            odd = first_bool(value)  # numpy casts [True, 0.5] to floats
            if odd is not None:
                raise TypeError(f"{name} must be {allowed}, got an entry {summarize(odd)} ({type(odd).__name__}).")
        return np.asarray(arr, dtype=np.float64)
    if kind == "O":  # Python objects: e.g. ints, floats and Fractions mixed, or None among numbers
        for entry in arr.flat:
            boolean = isinstance(entry, bool | np.bool_)
            if (boolean and not booleans) or not (boolean or isinstance(entry, numbers.Real)):
                raise TypeError(f"{name} must be {allowed}, got an entry {summarize(entry)} ({type(entry).__name__}).")
        try:
            return np.asarray(arr, dtype=np.float64)
        except OverflowError:  # an int too large for a float
            raise ValueError(f"{name} must be {allowed}, got a number beyond the range of a float.") from None
    what = _NOT_REAL.get(kind, f"{arr.dtype} values")
    raise TypeError(f"{name} must be {allowed}, got {what} (a {arr.dtype} array of shape {arr.shape}).")


def masked_array(value: np.ma.MaskedArray) -> str:
    """How a refusal quotes a masked array, which is never taken for its numbers: its shape and why."""
    return f"a masked array of shape {value.shape} (numpy.ma.MaskedArray: its masked entries would be read as numbers)"


def not_numbers(value: Any) -> str | None:
    """What numpy would misread in the array-like ``value`` as numbers, for a refusal's "got ...", or None.

    ``np.asarray`` reads a masked array's masked entries as numbers and casts the bools of a list
    that also holds numbers (``[True, 0.5]``) to 1 and 0. For values of which a bool is never one
    (actions, rewards, per-copy parameters), such an array-like is refused as a boolean array is.

    Returns
    -------
    str or None
        :func:`masked_array`'s description for a ``numpy.ma.MaskedArray``; ``"a list holding True
        (bool)"`` (the first bool or boolean array) for a list or tuple with a bool at any depth;
        None otherwise (arrays included: their dtype tells).
    """
    if isinstance(value, np.ma.MaskedArray):
        return masked_array(value)
    if isinstance(value, list | tuple):
        odd = first_bool(value)
        if odd is not None:
            return f"a {type(value).__name__} holding {summarize(odd)} ({type(odd).__name__})"
    return None


def first_bool(value: Any) -> Any:
    """The first bool (or boolean array) inside nested lists and tuples ``value``, or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(reversed(item))
        elif isinstance(item, bool | np.bool_) or (isinstance(item, np.ndarray) and item.dtype.kind == "b"):
            return item
    return None


def check_unit_array(
    name: str, value: Any, shape: tuple[int, ...] | None = None, *, booleans: bool = True
) -> np.ndarray:
    """Return ``value`` as a float64 array with entries in [0, 1] (and the given shape).

    ``booleans=False`` refuses a boolean array (see :func:`real_array`), as it refuses strings and
    complex numbers.
    """
    arr = real_array(name, value, "an array of numbers in [0, 1]", booleans=booleans)
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers in [0, 1], but it has NaN or inf.")
    if arr.size and (arr.min() < 0.0 or arr.max() > 1.0):
        raise ValueError(f"{name} must contain numbers in [0, 1], got values in [{arr.min():g}, {arr.max():g}].")
    return arr

"""Assertion helpers for exercise tests.

Exercise tests (``test_visible.py`` / ``test_hidden.py``) run in the harness
process and receive the learner's results as plain data: ints, floats,
strings, lists, tuples, dicts, CPU tensors or numpy arrays.  These helpers
compare such results with expected values and, when they differ, raise an
``AssertionError`` whose message a learner can act on: it names the quantity,
shows both values with their units, and states the tolerance used.

Every comparison happens here, on the harness side, with the harness's own
``torch``; nothing in the learner's process can influence it.  Results that
are not plain data (an object that claims to equal everything, a tensor
subclass) are refused or converted to plain tensors before comparing.

This module imports nothing from the rest of the repository.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, TypeGuard

import torch

__all__ = [
    "GB",
    "GIB",
    "assert_arguments_unchanged",
    "assert_bytes",
    "assert_close",
    "assert_distribution",
    "assert_equal",
    "assert_int",
    "assert_tensor",
    "by_reference",
    "call_by_reference",
    "default_tolerances",
    "fmt_bytes",
    "job_seed",
]

GIB = 1024**3
"""Bytes in one gibibyte (binary, 2**30)."""

GB = 10**9
"""Bytes in one gigabyte (decimal, 10**9)."""

# (rtol, atol) by dtype: close to torch.testing's defaults, which are tuned to
# the rounding error of each floating-point format.
_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1.3e-6, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
}

# Ratios between two byte counts that point at a unit mix-up rather than a
# wrong formula.  Only generic unit hints: none of them gives an answer away.
_UNIT_HINTS: tuple[tuple[float, str], ...] = (
    (GIB / GB, "the ratio between a GiB (2**30 bytes) and a GB (10**9 bytes)"),
    (8.0, "the number of bits in a byte"),
    (1024.0, "the ratio between KiB and bytes"),
    (1024.0**2, "the ratio between MiB and bytes"),
    (1024.0**3, "the ratio between GiB and bytes"),
    (1e9, "the ratio between GB and bytes"),
)


def job_seed() -> int:
    """The seed of this grading job, for tests that generate their inputs.

    Each Submit draws a fresh one and stores it with the submission; a
    rejudge reuses it, so a grade can always be reproduced. Outside the
    harness (an author running the tests by hand) it is 0.
    """
    try:
        return int(os.environ.get("DOJO_SEED", "0"))
    except ValueError:
        return 0


# ---------------------------------------------------------------------------
# Values that cross to the learner's process
# ---------------------------------------------------------------------------
# The learner's code runs in another process: the arguments a test passes
# reach it as copies, and what it returns comes back as a copy. So a test
# that checks its own tensor after a call, or changes a list it got back,
# sees nothing of what the learner's code did with its copy. The helpers
# below check what such a test means to check. Outside the harness (tests
# run in one process) the learner's objects are the test's own, and the
# usual checks already see everything.


def assert_arguments_unchanged(solution: object, what: str) -> None:
    """Fail if the last call into the learner's code changed an argument in place.

    ``solution`` is the fixture or any object the learner's code returned
    (they share one process). Call it right after the call, e.g.
    ``solution.normalise(x)`` then
    ``assert_arguments_unchanged(solution, "normalise")``.
    """
    changed_of = getattr(type(solution), "_dojo_changed_arguments", None)
    if changed_of is None:  # in one process: compare the test's own data instead
        return
    changed = changed_of(solution)
    if changed:
        names = ", ".join(f"argument {item + 1}" if isinstance(item, int) else f"argument {item}=" for item in changed)
        _fail(f"{what} changed its input in place ({names}); it must leave the caller's data as it was (work on a copy).")


def by_reference(obj: object, name: str) -> Any:
    """``obj.name`` as the learner's own object, not a copy.

    Calling its methods (``append``, ``clear``, ``mul_``, ...) changes it in
    the learner's process, as a caller holding it would. That is how a test
    checks that an attribute or property hands out a copy of internal state:
    change what it returned, then read the attribute again.
    """
    by_ref = getattr(type(obj), "_dojo_by_reference", None)
    if by_ref is None:
        return getattr(obj, name)
    return by_ref(obj, name)


def call_by_reference(obj: object, name: str, *args: Any, **kwargs: Any) -> Any:
    """``obj.name(*args, **kwargs)``, its result as the learner's own object, not a copy.

    As ``by_reference``, for a method: a table a method hands out can be
    changed as a caller holding it would, then the method called again.
    """
    call_ref = getattr(type(obj), "_dojo_call_by_reference", None)
    if call_ref is None:
        return getattr(obj, name)(*args, **kwargs)
    return call_ref(obj, name, args, kwargs)


# ---------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------


def fmt_bytes(n: float) -> str:
    """Format a byte count with its binary and decimal sizes.

    >>> fmt_bytes(1073741824)
    '1,073,741,824 bytes (1.000 GiB, 1.074 GB)'
    """
    if isinstance(n, float) and not n.is_integer():
        head = f"{n:,.3f} bytes"
    else:
        head = f"{int(n):,} bytes"
    size = abs(float(n))
    if size >= GIB / 10:
        return f"{head} ({n / GIB:.3f} GiB, {n / GB:.3f} GB)"
    if size >= 1024**2 / 10:
        return f"{head} ({n / 1024**2:.3f} MiB, {n / 10**6:.3f} MB)"
    if size >= 1024:
        return f"{head} ({n / 1024:.3f} KiB, {n / 1000:.3f} kB)"
    return head


def _fail(message: str) -> NoReturn:
    """Fail the test.  Always an AssertionError, so a wrong result is a
    failed test and never an error in the test itself."""
    raise AssertionError(message)


def _type_name(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"torch.Tensor (dtype {value.dtype}, shape {tuple(value.shape)})"
    return type(value).__name__


def _short(value: object, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fmt_number(x: float) -> str:
    return f"{x:.6g}"


# ---------------------------------------------------------------------------
# Exact numbers
# ---------------------------------------------------------------------------


def _whole_number(value: object, role: str, what: str, unit: str) -> int:
    """Return ``value`` as an int, or fail if it is not a whole number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(f"{what}: {role} must be a whole number of {unit} (an int), got {_type_name(value)}: {_short(value)}")
    if isinstance(value, float):
        if not math.isfinite(value):
            _fail(f"{what}: {role} is {value}, not a number of {unit}")
        if not value.is_integer():
            _fail(f"{what}: {role} is {value!r}, a fraction; it must be a whole number of {unit}")
    return int(value)


def _ratio_text(actual: int, expected: int) -> str:
    if actual == expected:
        return ""
    if expected == 0 or actual == 0:
        return f"a difference of {abs(actual - expected):,}"
    ratio = actual / expected
    if ratio > 0:
        big = max(ratio, 1 / ratio)
        direction = "too large" if ratio > 1 else "too small"
        text = f"off by a factor of {big:.4g} ({direction})"
        for factor, meaning in _UNIT_HINTS:
            if math.isclose(big, factor, rel_tol=1e-6):
                text += f"; {big:.4g} is {meaning}"
                break
        return text
    return f"a difference of {actual - expected:,} (wrong sign)"


def assert_bytes(actual: object, expected: float, what: str) -> None:
    """Check an exact byte count.

    ``actual`` may be an int or a float with an integral value (``2.0**30``);
    anything else (a fraction, a string, None, a tensor) fails with a message
    saying what arrived instead.
    """
    exp = _whole_number(expected, "the expected value", what, "bytes")
    got = _whole_number(actual, "your result", what, "bytes")
    if got != exp:
        _fail(f"{what}: got {fmt_bytes(got)}, expected {fmt_bytes(exp)}; {_ratio_text(got, exp)}")


def assert_int(actual: object, expected: int, what: str, unit: str = "") -> None:
    """Check an exact count (sequences, steps, blocks...).

    Accepts an int or an integral float, like :func:`assert_bytes`.
    """
    unit_name = unit or "units"
    exp = _whole_number(expected, "the expected value", what, unit_name)
    got = _whole_number(actual, "your result", what, unit_name)
    if got != exp:
        suffix = f" {unit}" if unit else ""
        _fail(f"{what}: got {got:,}{suffix}, expected {exp:,}{suffix}; {_ratio_text(got, exp)}")


# ---------------------------------------------------------------------------
# Plain data structures
# ---------------------------------------------------------------------------

_PLAIN_SCALARS = (type(None), bool, int, float, str)


def _first_difference(actual: object, expected: object, path: str) -> str | None:
    """Describe the first place where ``actual`` and ``expected`` differ.

    Works on nested dicts, lists and tuples of plain scalars.  Lists and
    tuples compare equal to each other (data sent between processes may turn
    one into the other); ints and integral floats compare equal.
    """
    where = f"{path}: " if path else ""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"{where}expected a dict, got {_type_name(actual)}: {_short(actual)}"
        missing = [k for k in expected if k not in actual]
        if missing:
            return f"{where}missing key(s) {_short(missing)}"
        extra = [k for k in actual if k not in expected]
        if extra:
            return f"{where}unexpected key(s) {_short(extra)}"
        for key in expected:
            found = _first_difference(actual[key], expected[key], f"{path}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(expected, Sequence) and not isinstance(expected, str):
        if isinstance(actual, str) or not isinstance(actual, Sequence):
            return f"{where}expected a list, got {_type_name(actual)}: {_short(actual)}"
        if len(actual) != len(expected):
            return f"{where}expected {len(expected)} item(s), got {len(actual)}: {_short(list(actual))}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            found = _first_difference(a, e, f"{path}[{i}]")
            if found:
                return found
        return None
    if not isinstance(actual, _PLAIN_SCALARS):
        return f"{where}expected {_short(expected)}, got {_type_name(actual)}"
    if isinstance(expected, bool) or isinstance(actual, bool):
        same = type(actual) is type(expected) and actual == expected
    elif isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        same = actual == expected
    else:
        same = type(actual) is type(expected) and actual == expected
    if not same:
        return f"{where}got {_short(actual)}, expected {_short(expected)}"
    return None


def assert_equal(actual: object, expected: object, what: str) -> None:
    """Check plain data (scalars, lists, tuples, dicts, nested) for equality.

    The message points at the first differing key or index, e.g.
    ``latency['r2']: got 7, expected 6``.
    """
    found = _first_difference(actual, expected, "")
    if found:
        _fail(f"{what}: {found}")


# ---------------------------------------------------------------------------
# Floats and tensors
# ---------------------------------------------------------------------------


def default_tolerances(dtype: torch.dtype) -> tuple[float, float]:
    """Return ``(rtol, atol)`` for comparing values of ``dtype``.

    Integer and boolean dtypes compare exactly: ``(0.0, 0.0)``.
    """
    if dtype in _TOLERANCES:
        return _TOLERANCES[dtype]
    if dtype.is_floating_point:
        return _TOLERANCES[torch.float32]
    return (0.0, 0.0)


def _as_plain_tensor(value: Any) -> torch.Tensor:
    """Copy a tensor or numpy array into a plain CPU ``torch.Tensor``."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().as_subclass(torch.Tensor).clone()
    return torch.as_tensor(value).clone()


def _is_numpy_array(value: object) -> bool:
    cls = type(value)
    return cls.__module__ == "numpy" and cls.__name__ == "ndarray"


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _index_text(flat_index: int, shape: tuple[int, ...]) -> str:
    if not shape:
        return "()"
    index = []
    for size in reversed(shape):
        index.append(flat_index % size)
        flat_index //= size
    return str(tuple(reversed(index)))


def _compare_tensors(
    got: torch.Tensor,
    exp: torch.Tensor,
    rtol: float | None,
    atol: float | None,
    what: str,
    dtype_label: str,
) -> None:
    d_rtol, d_atol = default_tolerances(exp.dtype)
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    got64 = got.to(torch.float64) if got.dtype != torch.bool else got.to(torch.int64)
    exp64 = exp.to(torch.float64) if exp.dtype != torch.bool else exp.to(torch.int64)
    got64 = got64.to(torch.float64)
    exp64 = exp64.to(torch.float64)
    ok = torch.isclose(got64, exp64, rtol=rtol, atol=atol, equal_nan=True)
    if bool(ok.all()):
        return
    diff = (got64 - exp64).abs()
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
    diff = torch.where(ok, torch.zeros_like(diff), diff)
    flat = int(torch.argmax(diff.reshape(-1)).item()) if diff.numel() else 0
    bad = int((~ok).sum().item())
    shape = tuple(exp.shape)
    g = got64.reshape(-1)[flat].item()
    e = exp64.reshape(-1)[flat].item()
    max_diff = diff.reshape(-1)[flat].item()
    where = "" if not shape else f" at index {_index_text(flat, shape)}"
    count = "" if not shape else f"; {bad:,} of {exp.numel():,} element(s) out of tolerance"
    _fail(
        f"{what}: values differ beyond tolerance (rtol={rtol:g}, atol={atol:g}, "
        f"{dtype_label}): max abs diff {_fmt_number(max_diff)}{where}: "
        f"got {_fmt_number(g)}, expected {_fmt_number(e)}{count}"
    )


def assert_close(
    actual: object,
    expected: object,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    what: str,
) -> None:
    """Check floats or tensors within ``|actual - expected| <= atol + rtol * |expected|``.

    - ``expected`` a Python number: ``actual`` must be an int or float;
      default tolerances are float64's.
    - ``expected`` a list/tuple of numbers: ``actual`` must be a list or
      tuple of the same length; compared element-wise as float64.
    - ``expected`` a tensor (or numpy array): ``actual`` must be a tensor
      (or numpy array) with the same shape and dtype; default tolerances are
      those of ``expected``'s dtype (see :func:`default_tolerances`).

    NaN matches only NaN.  The message states the tolerances used and the
    largest difference with its index.
    """
    if isinstance(expected, torch.Tensor) or _is_numpy_array(expected):
        exp = _as_plain_tensor(expected)
        expected_kind = "a torch.Tensor" if isinstance(expected, torch.Tensor) else "an array"
        if not (isinstance(actual, torch.Tensor) or _is_numpy_array(actual)):
            _fail(
                f"{what}: expected {expected_kind} of shape {tuple(exp.shape)} and "
                f"dtype {exp.dtype}, got {_type_name(actual)}: {_short(actual)}"
            )
        got = _as_plain_tensor(actual)
        assert_tensor(got, shape=tuple(exp.shape), dtype=exp.dtype, what=what)
        _compare_tensors(got, exp, rtol, atol, what, f"dtype {exp.dtype}")
        return
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)):
            _fail(f"{what}: expected a list of {len(expected)} number(s), got {_type_name(actual)}: {_short(actual)}")
        if len(actual) != len(expected):
            _fail(f"{what}: expected {len(expected)} number(s), got {len(actual)}: {_short(list(actual))}")
        for i, item in enumerate(actual):
            if not _is_number(item):
                _fail(f"{what}: item [{i}] must be a number, got {_type_name(item)}: {_short(item)}")
        _compare_tensors(
            torch.tensor([float(x) for x in actual], dtype=torch.float64),
            torch.tensor([float(x) for x in expected], dtype=torch.float64),
            rtol,
            atol,
            what,
            "compared as float64",
        )
        return
    if not _is_number(expected):
        raise TypeError(f"assert_close: unsupported expected value {_type_name(expected)}")
    if not _is_number(actual):
        _fail(f"{what}: expected a number, got {_type_name(actual)}: {_short(actual)}")
    _compare_tensors(
        torch.tensor(float(actual), dtype=torch.float64),
        torch.tensor(float(expected), dtype=torch.float64),
        rtol,
        atol,
        what,
        "compared as float64",
    )


def assert_tensor(
    actual: object,
    *,
    shape: Sequence[int] | None = None,
    dtype: torch.dtype | None = None,
    what: str,
) -> None:
    """Check that ``actual`` is a CPU ``torch.Tensor`` of the given shape and dtype."""
    if not isinstance(actual, torch.Tensor):
        _fail(f"{what}: expected a torch.Tensor, got {_type_name(actual)}: {_short(actual)}")
    if shape is not None and tuple(actual.shape) != tuple(shape):
        _fail(f"{what}: expected shape {tuple(shape)}, got {tuple(actual.shape)}")
    if dtype is not None and actual.dtype != dtype:
        _fail(f"{what}: expected dtype {dtype}, got {actual.dtype}")


# ---------------------------------------------------------------------------
# Distributions
# ---------------------------------------------------------------------------


def assert_distribution(
    samples: object,
    probs: torch.Tensor,
    *,
    max_tv: float,
    what: str,
) -> None:
    """Check that integer ``samples`` follow the distribution ``probs``.

    ``samples`` is a 1-D tensor or list of category indices in
    ``[0, len(probs))``.  The check passes when the total variation distance
    between the empirical frequencies and ``probs`` (half the L1 distance)
    is at most ``max_tv``.  Pick ``max_tv`` several standard errors above
    ``sqrt(1 / n_samples)`` so a correct sampler passes for any seed.
    """
    if isinstance(samples, (list, tuple)):
        if not all(_is_number(s) and float(s).is_integer() for s in samples):
            _fail(f"{what}: samples must be whole numbers (token ids)")
        got = torch.tensor([int(s) for s in samples], dtype=torch.int64)
    elif isinstance(samples, torch.Tensor) or _is_numpy_array(samples):
        got = _as_plain_tensor(samples).reshape(-1)
        if got.is_floating_point():
            _fail(f"{what}: samples must be integer token ids, got {got.dtype}")
        got = got.to(torch.int64)
    else:
        _fail(f"{what}: expected a tensor or list of token ids, got {_type_name(samples)}")
    p = _as_plain_tensor(probs).to(torch.float64).reshape(-1)
    n = got.numel()
    if n == 0:
        _fail(f"{what}: no samples")
    if int(got.min()) < 0 or int(got.max()) >= p.numel():
        _fail(f"{what}: token ids must lie in [0, {p.numel()}), got values from {int(got.min())} to {int(got.max())}")
    freq = torch.bincount(got, minlength=p.numel()).to(torch.float64) / n
    tv = 0.5 * float((freq - p).abs().sum())
    if tv > max_tv:
        worst = int(torch.argmax((freq - p).abs()))
        _fail(
            f"{what}: the empirical distribution of {n:,} samples is too far from "
            f"the expected one: total variation distance {tv:.4f} > {max_tv:g}. "
            f"Largest gap at token {worst}: frequency {float(freq[worst]):.4f}, "
            f"expected probability {float(p[worst]):.4f}.\n"
            f"  observed: {[round(float(x), 4) for x in freq]}\n"
            f"  expected: {[round(float(x), 4) for x in p]}"
        )

"""The documented-domain guard (issue 58): refuse and record any call a rung's
tests make outside the inputs its instructions define.

A rung declares, in ``rung.yaml``'s ``domain:``, the inputs each entry point
accepts and the documented bad inputs with the exception each raises
(``docs/authoring.md``, "Documented domain"). Check and ``validate_exercises``
grade the reference with its hidden tests wrapped so that every call of the
``solution`` fixture and of the ``reference`` module passes through a
``Guard``: a call outside both is recorded and refused with
``UndocumentedCall``, and the test fails naming the call.

This module runs where the tests run, inside the sandbox's harness process
(``domain_test_source`` appends its own source to the hidden tests), so it
imports nothing but the standard library and, for tensors, torch. The spec
it reads is ``RungMeta.domain`` dumped to plain JSON.
"""

from __future__ import annotations

import builtins
import inspect
import json
import math
import operator
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

MARKER = "testing undocumented behaviour"
# A hidden test whose name starts so is a generator: every call it makes to the
# solution is one generated case (docs/authoring.md, "Test strength").
GENERATED_PREFIX = "test_generated_"
# The last test of a guarded run fails on purpose with the calls each test made,
# the one way a passing run's figures come back from the sandbox.
COUNTS_TEST = "test_zz_dojo_case_counts"
COUNTS_MARKER = "dojo case counts"
TYPE_NAMES = ("int", "float", "number", "bool", "str", "none", "list", "tuple", "dict", "tensor", "any")


class UndocumentedCall(BaseException):
    """A test called an entry point outside its declared domain.

    A BaseException, so a test's ``except Exception`` or ``pytest.raises(ValueError)``
    cannot swallow it."""


def _probability_rows(value: Any) -> bool:
    import torch

    if not isinstance(value, torch.Tensor) or not value.is_floating_point() or value.dim() == 0:
        return False
    data = value.detach().to("cpu", torch.float64)
    if not bool(torch.isfinite(data).all()) or bool((data < 0).any()):
        return False
    return bool(torch.allclose(data.sum(-1), torch.ones((), dtype=torch.float64), rtol=1e-6, atol=1e-6))


# Named domains an argument can refer to with ``generator: <name>``.
NAMED_DOMAINS: dict[str, Callable[[Any], bool]] = {"probability_rows": _probability_rows}


def _is_tensor(value: Any) -> bool:
    cls = type(value)
    return any(base.__module__.startswith("torch") and base.__name__ == "Tensor" for base in cls.__mro__)


def _type_ok(value: Any, name: str) -> bool:
    if name == "any":
        return True
    if name == "int":
        return type(value) is int
    if name == "float":
        return type(value) is float
    if name == "number":
        return type(value) in (int, float)
    if name == "bool":
        return type(value) is bool
    if name == "str":
        return type(value) is str
    if name == "none":
        return value is None
    if name == "list":
        return type(value) is list
    if name == "tuple":
        return type(value) is tuple
    if name == "dict":
        return type(value) is dict
    if name == "tensor":
        return _is_tensor(value)
    raise ValueError(f"unknown type {name!r} in a domain (known: {', '.join(TYPE_NAMES)})")


def describe(value: Any, limit: int = 80) -> str:
    """A short, readable form of an argument."""
    if _is_tensor(value):
        return f"tensor({str(value.dtype).removeprefix('torch.')}, shape {tuple(value.shape)})"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _same_choice(value: Any, choice: Any) -> bool:
    return type(value) is type(choice) and value == choice


def _bounds_ok(values: list[float], spec: dict[str, Any]) -> bool:
    tests: tuple[tuple[str, Callable[[float, float], bool]], ...] = (
        ("min", operator.ge), ("max", operator.le), ("above", operator.gt), ("below", operator.lt),
    )
    for key, holds in tests:
        bound = spec.get(key)
        if bound is not None and not all(holds(x, bound) for x in values):
            return False  # NaN compares false: it never satisfies a bound
    return True


def _tensor_ok(value: Any, spec: dict[str, Any], symbols: dict[str, int]) -> str | None:
    import torch

    if spec.get("dtype") is not None and str(value.dtype).removeprefix("torch.") not in spec["dtype"]:
        return f"dtype {str(value.dtype).removeprefix('torch.')} is not one of {', '.join(spec['dtype'])}"
    shape = spec.get("shape")
    if shape is not None:
        if len(shape) != value.dim():
            return f"shape {tuple(value.shape)} has {value.dim()} dims, not {len(shape)}"
        for size, dim in zip(value.shape, shape, strict=True):
            if isinstance(dim, int) and size != dim:
                return f"shape {tuple(value.shape)} does not match {shape}"
            if isinstance(dim, str) and dim != "*":
                if symbols.setdefault(dim, int(size)) != size:
                    return f"shape {tuple(value.shape)}: {dim} is {size} here but {symbols[dim]} elsewhere in the call"
    if spec.get("ndim") is not None and value.dim() != spec["ndim"]:
        return f"has {value.dim()} dims, not {spec['ndim']}"
    needs_values = spec.get("finite") or any(spec.get(key) is not None for key in ("min", "max", "above", "below"))
    if needs_values and value.numel():
        data = value.detach().to("cpu")
        data = data.to(torch.float64) if not data.is_complex() else data
        if spec.get("finite") and not bool(torch.isfinite(data).all()):
            return "holds NaN or inf"
        lo, hi = float(data.min()), float(data.max())
        if not _bounds_ok([lo, hi], spec):
            return f"holds values from {lo:g} to {hi:g}, outside the declared range"
    return None


def mismatch(value: Any, spec: dict[str, Any], symbols: dict[str, int]) -> str | None:
    """Why ``value`` lies outside ``spec``, or None when it lies inside.

    ``symbols`` binds the shape symbols of one call (filled in as tensors are checked)."""
    types = spec.get("type") or "any"
    types = [types] if isinstance(types, str) else list(types)
    if not any(_type_ok(value, name) for name in types):
        return f"type {type(value).__name__} is not {' or '.join(types)}"
    if spec.get("choices") is not None and not any(_same_choice(value, choice) for choice in spec["choices"]):
        return f"is not one of {spec['choices']!r}"
    if _is_tensor(value):
        found = _tensor_ok(value, spec, symbols)
        if found:
            return found
    elif type(value) in (int, float):
        if spec.get("finite") and not math.isfinite(value):
            return "is not finite"
        if not _bounds_ok([value], spec):
            return "is outside the declared range"
    if isinstance(value, (list, tuple, str, dict)):
        if spec.get("min_len") is not None and len(value) < spec["min_len"]:
            return f"has length {len(value)} < {spec['min_len']}"
        if spec.get("max_len") is not None and len(value) > spec["max_len"]:
            return f"has length {len(value)} > {spec['max_len']}"
    if spec.get("items") is not None and isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = mismatch(item, spec["items"], symbols)
            if found:
                return f"item [{index}] {found}"
    if isinstance(value, dict) and any(spec.get(key) is not None for key in ("fields", "optional_fields")):
        fields, optional = spec.get("fields") or {}, spec.get("optional_fields") or {}
        for key, sub in {**fields, **optional}.items():
            if key not in value:
                if key in fields:
                    return f"lacks the key {key!r}"
                continue
            found = mismatch(value[key], sub, symbols)
            if found:
                return f"[{key!r}] {found}"
        if not spec.get("other_fields"):
            extra = [key for key in value if key not in fields and key not in optional]
            if extra:
                return f"has undeclared key(s) {extra!r}"
    named = spec.get("generator")
    if named is not None and not NAMED_DOMAINS[named](value):
        return f"is not in the named domain {named}"
    where = spec.get("where")
    if where is not None and not _evaluate(where, {"value": value}):
        return f"fails `{where}`"
    return None


def _evaluate(expression: str, names: dict[str, Any]) -> bool:
    scope: dict[str, Any] = {"__builtins__": builtins, "math": math}
    try:
        import torch

        scope["torch"] = torch
    except ImportError:  # pragma: no cover - every grading image has torch
        pass
    try:
        return bool(eval(expression, scope, names))  # the author's own expression, run where the tests run
    except Exception:  # noqa: BLE001 - an expression that cannot be evaluated does not hold
        return False


class Verdict:
    """How a call relates to the domain: ``inside``, ``bad`` (raises one of ``raises``) or ``undocumented``."""

    def __init__(self, kind: str, why: str = "", raises: tuple[str, ...] = ()) -> None:
        self.kind, self.why, self.raises = kind, why, raises


def judge(entry: dict[str, Any], arguments: dict[str, Any], this: Any = None, context: dict[str, Any] | None = None) -> Verdict:
    """Judge one bound call of an entry point.

    ``arguments``: only those the caller passed (the others are not judged);
    ``context``: every argument, defaults included, for the ``requires`` checks."""
    symbols: dict[str, int] = {}
    declared = entry.get("args") or {}
    raises: list[str] = []
    for name, value in arguments.items():
        if name not in declared:
            return Verdict("undocumented", f"argument {name}={describe(value)} has no declared domain")
        spec = declared[name]
        found = mismatch(value, spec, symbols)
        if found is None:
            continue
        documented = [bad["raises"] for bad in spec.get("bad") or [] if mismatch(value, bad, {}) is None]
        if spec.get("otherwise"):
            documented.append(spec["otherwise"])
        if not documented:
            return Verdict("undocumented", f"argument {name}={describe(value)} {found}, and no documented bad input covers it")
        raises += documented
    if raises:
        return Verdict("bad", "documented bad input", tuple(dict.fromkeys(raises)))
    names = {**symbols, **(context if context is not None else arguments), "self": this}
    for requirement in entry.get("requires") or []:
        if not _evaluate(requirement["check"], dict(names)):
            if requirement.get("raises"):
                return Verdict("bad", f"breaks `{requirement['check']}`", (requirement["raises"],))
            return Verdict("undocumented", f"breaks `{requirement['check']}`, which the rules do not cover")
    return Verdict("inside")


def _exception_named(name: str) -> type[BaseException]:
    found = getattr(builtins, name, None)
    if not (isinstance(found, type) and issubclass(found, BaseException)):
        raise ValueError(f"{name!r} is not a builtin exception")
    return found


def _current_test() -> str:
    # pytest sets it for every phase: "path::test_name (call)".
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    return current.split("::")[-1].rsplit(" ", 1)[0] if current else "(outside a test)"


def _signature(obj: Any, method: bool) -> inspect.Signature | None:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    if method:
        parameters = list(signature.parameters.values())[1:]  # without self
        signature = signature.replace(parameters=parameters)
    return signature


class Guard:
    """Judges the calls of one test run against a rung's domain, and records the undocumented ones."""

    def __init__(self, domain: dict[str, Any], reference: Any) -> None:
        self.domain = domain
        self.records: list[tuple[str, str]] = []
        self.depth = 0  # calls the reference makes into itself are not the tests' calls
        # Calls of the ``solution`` fixture per test (the reference's own calls are not cases).
        self.calls: dict[str, int] = {}
        self.signatures: dict[str, inspect.Signature | None] = {}
        # Entry owners that are classes: calling one makes an object whose methods are guarded.
        self.classes: set[str] = set()
        for key in domain:
            owner, _, method = key.partition(".")
            target = getattr(reference, owner, None)
            if target is None:
                raise ValueError(f"domain entry {key!r}: the reference defines no {owner}")
            if isinstance(target, type):
                self.classes.add(owner)
            if method:
                self.signatures[key] = _signature(getattr(target, method, None), method=True)
            elif isinstance(target, type):
                self.signatures[key] = _signature(vars(target).get("__init__") or getattr(target, "__init__"), method=True)  # noqa: B009
            else:
                self.signatures[key] = _signature(target, method=False)

    # -- judging ---------------------------------------------------------

    def call(
        self, key: str, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], this: Any = None, *, case: bool = False
    ) -> Any:
        """Call ``function`` if the call lies inside the domain or is a documented bad input; else record and refuse.

        ``case``: a call of the ``solution`` fixture, counted for its test."""
        if self.depth:
            return function(*args, **kwargs)
        if case:
            self.count_case()
        signature = self.signatures.get(key)
        shown = ", ".join([describe(value) for value in args] + [f"{name}={describe(value)}" for name, value in kwargs.items()])
        try:
            bound = signature.bind(*args, **kwargs) if signature is not None else None
        except TypeError as exc:
            verdict = Verdict("undocumented", f"does not fit the signature ({exc})")
        else:
            passed = dict(bound.arguments) if bound is not None else dict(kwargs)
            if bound is not None:
                bound.apply_defaults()
            verdict = judge(self.domain[key], passed, this, dict(bound.arguments) if bound is not None else passed)
        if verdict.kind == "undocumented":
            self._refuse(f"{key}({shown}): {verdict.why}")
        self.depth += 1
        try:
            result = function(*args, **kwargs)
        except BaseException as exc:
            if verdict.kind == "bad" and not isinstance(exc, tuple(_exception_named(name) for name in verdict.raises)):
                self._refuse(f"{key}({shown}): documented to raise {' or '.join(verdict.raises)}, the reference raised {type(exc).__name__}")
            raise
        finally:
            self.depth -= 1
        if verdict.kind == "bad":
            self._refuse(f"{key}({shown}): documented to raise {' or '.join(verdict.raises)} ({verdict.why}), the reference returned {describe(result)}")
        return result

    def undeclared(self, key: str, value: Any) -> Any:
        """``value`` as the tests get it when the domain does not name ``key``: a
        public callable given arguments is refused (its inputs are documented nowhere);
        called without any, or anything else, it passes as it is."""
        if key.rpartition(".")[2].startswith("_") or not callable(value) or isinstance(value, type):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            if not self.depth:
                self.count_case()
            if (args or kwargs) and not self.depth:
                shown = ", ".join([describe(item) for item in args] + [f"{name}={describe(item)}" for name, item in kwargs.items()])
                self._refuse(f"{key}({shown}): the domain declares no entry {key}")
            return value(*args, **kwargs)

        return call

    def count_case(self) -> None:
        test = _current_test()
        self.calls[test] = self.calls.get(test, 0) + 1

    def case_counts(self) -> dict[str, Any]:
        """The calls of each generator test (``GENERATED_PREFIX``) and their sum: the run's generated cases."""
        generated = {test: count for test, count in self.calls.items() if test.startswith(GENERATED_PREFIX)}
        return {"generated": sum(generated.values()), "calls": generated}

    def counts_line(self) -> str:
        """``case_counts`` as the message ``COUNTS_TEST`` fails with (``parse_counts`` reads it back)."""
        return f"{COUNTS_MARKER}: {json.dumps(self.case_counts(), sort_keys=True)}"

    def _refuse(self, text: str) -> None:
        record = (_current_test(), text)
        if record not in self.records:
            self.records.append(record)
        raise UndocumentedCall(f"{MARKER}: {record[0]}: {text}")

    def recorded_in(self, test: str) -> list[str]:
        return [text for name, text in self.records if name == test]

    def fail_if_recorded(self, test: str) -> None:
        """Fail ``test`` (at its teardown) if it made an undocumented call, even one it caught."""
        found = self.recorded_in(test)
        if found:
            raise AssertionError(f"{MARKER}: {test}: " + "; ".join(found))

    # -- wrapping ----------------------------------------------------------

    def wrap_reference(self, module: Any, namespaces: list[dict[str, Any]] | None = None) -> None:
        """Replace the module's entry points with guarded ones (and the same objects in ``namespaces``, e.g. a test module's globals)."""
        for owner in {key.partition(".")[0] for key in self.domain}:
            original = getattr(module, owner)
            replacement = self._guarded_class(original, owner) if isinstance(original, type) else self._guarded_function(original, owner)
            setattr(module, owner, replacement)
            for namespace in namespaces or []:
                for name, value in list(namespace.items()):
                    if value is original:
                        namespace[name] = replacement

    def _guarded_function(self, function: Callable[..., Any], key: str) -> Callable[..., Any]:
        guard = self

        def guarded(*args: Any, **kwargs: Any) -> Any:
            return guard.call(key, function, args, kwargs)

        guarded.__name__ = getattr(function, "__name__", key)
        guarded.__wrapped__ = function  # type: ignore[attr-defined]
        return guarded

    def _guarded_class(self, cls: type, owner: str) -> type:
        guard = self
        namespace: dict[str, Any] = {}
        if owner in self.domain:
            original_init = cls.__init__  # type: ignore[misc]

            def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
                guard.call(owner, lambda *a, **k: original_init(self, *a, **k), args, kwargs)

            namespace["__init__"] = __init__
        for key in self.domain:
            if key.startswith(owner + "."):
                namespace[key.partition(".")[2]] = self._guarded_method(cls, key)
        return type(cls.__name__, (cls,), namespace)

    def _guarded_method(self, cls: type, key: str) -> Callable[..., Any]:
        guard, name = self, key.partition(".")[2]
        original = getattr(cls, name)

        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            return guard.call(key, lambda *a, **k: original(self, *a, **k), args, kwargs, this=self)

        method.__name__ = name
        return method

    def wrap_solution(self, solution: Any) -> Any:
        """The ``solution`` fixture with its entry points guarded (a module or the harness's proxy of one)."""
        return _GuardedObject(solution, self, "")


class _GuardedObject:
    """Forwards to ``target``, guarding the calls the domain declares: module
    level (``owner`` empty) or the methods of an instance of class ``owner``."""

    def __init__(self, target: Any, guard: Guard, owner: str) -> None:
        object.__setattr__(self, "_dojo_target", target)
        object.__setattr__(self, "_dojo_guard", guard)
        object.__setattr__(self, "_dojo_owner", owner)

    def __getattr__(self, name: str) -> Any:
        target, guard, owner = self._dojo_target, self._dojo_guard, self._dojo_owner
        value = getattr(target, name)
        if owner:
            key = f"{owner}.{name}"
            if key in guard.domain:
                return lambda *args, **kwargs: guard.call(key, value, args, kwargs, this=target, case=True)
            return guard.undeclared(key, value)
        if name in guard.classes:

            def construct(*args: Any, **kwargs: Any) -> Any:
                if name not in guard.domain and not guard.depth:
                    guard.count_case()
                made = guard.call(name, value, args, kwargs, case=True) if name in guard.domain else value(*args, **kwargs)
                return _GuardedObject(made, guard, name)

            return construct
        if name in guard.domain:
            return lambda *args, **kwargs: guard.call(name, value, args, kwargs, case=True)
        return guard.undeclared(name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._dojo_target, name, value)

    def __repr__(self) -> str:
        return repr(self._dojo_target)

    # ``grading``'s helpers look these up on the type of the solution or of an object it returned.
    def _dojo_changed_arguments(self) -> Any:
        target = self._dojo_target
        changed = getattr(type(target), "_dojo_changed_arguments", None)
        return changed(target) if changed is not None else []

    def _dojo_by_reference(self, name: str) -> Any:
        target = self._dojo_target
        by_ref = getattr(type(target), "_dojo_by_reference", None)
        return by_ref(target, name) if by_ref is not None else getattr(target, name)

    def _dojo_call_by_reference(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        target = self._dojo_target
        call_ref = getattr(type(target), "_dojo_call_by_reference", None)
        return call_ref(target, name, args, kwargs) if call_ref is not None else getattr(target, name)(*args, **kwargs)


def parse_counts(message: str) -> dict[str, Any] | None:
    """The figures in ``COUNTS_TEST``'s message, or None when it carries none."""
    at = message.find(COUNTS_MARKER + ": ")
    if at < 0:
        return None
    try:
        data = json.loads(message[at + len(COUNTS_MARKER) + 2 :].splitlines()[0])
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("generated"), int) else None


def domain_test_source(tests: str, domain: dict[str, Any]) -> str:
    """``tests`` (a test file's source) with the guard appended: the ``solution``
    fixture and the ``reference`` module it imports both judged by ``domain``."""
    guard_source = Path(__file__).read_text(encoding="utf-8")
    return (
        tests.rstrip("\n")
        + "\n\n\n# --- appended by the platform's domain check (exercises/domain_guard.py), never graded ---\n"
        + "def _dojo_domain_guard():\n"
        + "    import json, sys, types\n"
        + "    try:\n"
        + "        import reference\n"
        + "    except ImportError:  # a runner that does not provide it (in-process fakes): nothing to guard\n"
        + "        return None\n"
        + "    module = types.ModuleType('dojo_domain_guard')\n"
        + "    sys.modules['dojo_domain_guard'] = module\n"
        + f"    exec(compile({guard_source!r}, 'dojo_domain_guard.py', 'exec'), module.__dict__)\n"
        + f"    guard = module.Guard(json.loads({json.dumps(domain)!r}), reference)\n"
        + "    guard.wrap_reference(reference, [globals()])\n"
        + "    return guard\n\n\n"
        + "_dojo_guard = _dojo_domain_guard()\n\n\n"
        + "import pytest as _dojo_pytest  # noqa: E402\n\n\n"
        + "@_dojo_pytest.fixture(name='solution')\n"
        + "def _dojo_guarded_solution(solution):\n"
        + "    return solution if _dojo_guard is None else _dojo_guard.wrap_solution(solution)\n\n\n"
        + "@_dojo_pytest.fixture(autouse=True)\n"
        + "def _dojo_domain_report(request):\n"
        + "    yield\n"
        + "    if _dojo_guard is not None:\n"
        + "        _dojo_guard.fail_if_recorded(request.node.name)\n\n\n"
        + f"def {COUNTS_TEST}():\n"
        + "    if _dojo_guard is not None:\n"
        + "        raise AssertionError(_dojo_guard.counts_line())\n"
    )

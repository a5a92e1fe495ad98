"""How the learner's process tells an argument its code changed, without Docker.

``protocol.matches_encoding`` compares what an argument holds after the
call with the frame it arrived in. A value that went through the channel
untouched must always match (else a correct solution would fail
``assert_arguments_unchanged``), and any change a caller could see must not.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sandbox" / "harness"))

from dojo_harness.protocol import decode_value, encode_frame, encode_value, matches_encoding, parse_message  # type: ignore[import-not-found]

leaves = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
tensors = st.builds(
    lambda values, dtype: torch.tensor(values, dtype=dtype),
    st.lists(st.floats(-1e3, 1e3, width=32), max_size=6),
    st.sampled_from([torch.float32, torch.float64, torch.float16]),
)
values = st.recursive(
    leaves | tensors,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


def _through_the_channel(value: Any) -> tuple[Any, Any]:
    """``value`` as the learner's process receives it: the frame's data, and the value decoded from it."""
    frame = encode_frame({"args": [encode_value(value, lambda obj: {})]})
    data = parse_message(frame[4:])["args"][0]
    return data, decode_value(data, lambda tag: None)


def _no_handle(_: Any) -> None:
    return None


@settings(max_examples=300, deadline=None)
@given(values)
def test_a_value_left_alone_matches_its_frame(value: Any) -> None:
    data, received = _through_the_channel(value)
    assert matches_encoding(received, data, _no_handle)


def _changes(received: Any) -> list[Any]:
    """Changes a caller in the same process would see, each made to a fresh copy of ``received``."""
    out: list[Any] = []
    if isinstance(received, torch.Tensor):
        if received.numel():
            changed = received.clone()
            changed.view(-1)[0] += 1
            out.append(changed)
        out.append(received.to(torch.float64 if received.dtype != torch.float64 else torch.float32))
        out.append(torch.cat([received, torch.zeros(1, dtype=received.dtype)]))
    elif isinstance(received, list):
        out += [[*received, 0], received[:-1] if received else [None]]
    elif isinstance(received, dict):
        out += [{**received, "new key": 1}]
    elif isinstance(received, float) and not math.isnan(received):
        out += [received + 1.0 if abs(received) < 1e15 else -received if received else 1.0]
    elif isinstance(received, bool):
        out += [int(received)]
    return out


@settings(max_examples=300, deadline=None)
@given(values)
def test_a_changed_value_does_not_match_its_frame(value: Any) -> None:
    data, received = _through_the_channel(value)
    for changed in _changes(received):
        assert not matches_encoding(changed, data, _no_handle), (value, changed)


def test_changes_deep_inside_are_seen() -> None:
    value = {"trace": [{"id": "a", "arrival": 0}, {"id": "b", "arrival": 2}], "x": (torch.ones(2), 3)}
    data, received = _through_the_channel(value)
    received["trace"][1]["finish"] = 7
    assert not matches_encoding(received, data, _no_handle)
    data, received = _through_the_channel(value)
    received["x"][0].mul_(2)
    assert not matches_encoding(received, data, _no_handle)
    data, received = _through_the_channel(value)
    received["trace"].sort(key=lambda request: -request["arrival"])
    assert not matches_encoding(received, data, _no_handle)


def test_an_argument_the_solution_made_is_compared_by_identity() -> None:
    mine, other = object(), object()
    handles = {3: mine}
    assert matches_encoding(mine, {"__t": "ref", "id": 3}, handles.get)
    assert not matches_encoding(other, {"__t": "ref", "id": 3}, handles.get)

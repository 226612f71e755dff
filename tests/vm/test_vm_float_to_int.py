"""The VM's float -> integer kernel against the reference's `convert`."""

from __future__ import annotations

import numpy as np
import pytest

from dvm import numerics
from dvm.vm.composites import float_to_int

INTEGERS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _values(info: np.iinfo, rng: np.random.Generator) -> np.ndarray:
    """The edges of the integer range and of the float types, and values of every
    magnitude up to 1e20 of both signs."""
    edges = [0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.0, -1.0, np.nan, np.inf, -np.inf]
    edges += [info.max, info.min, info.max + 1, info.min - 1, 2.0 * info.max, 2.0 * info.min - 5]
    edges += [2.0**63, -(2.0**63), 2.0**64, 2.0**64 - 2048, 2.0**63 - 1024, 2.0**31 - 128]
    edges += [2.0**31, -(2.0**31) - 0.5, 127.5, -128.5, -129.0, 255.9, 256.0, 65504.0, -65504.0]
    spread = rng.standard_normal(3000) * 10.0 ** rng.integers(0, 21, 3000)
    return np.concatenate([np.array(edges), spread])


@pytest.mark.parametrize("integer", INTEGERS)
@pytest.mark.parametrize("floating", ["f16", "bf16", "f32", "f64"])
def test_float_to_int_truncates_and_saturates_as_the_reference(
    floating: str, integer: type, rng: np.random.Generator
) -> None:
    dtype = numerics.bfloat16() if floating == "bf16" else np.dtype(floating.replace("f", "float"))
    with np.errstate(all="ignore"):
        x = _values(np.iinfo(integer), rng).astype(dtype)
    out = np.empty(x.shape, integer)
    with np.errstate(all="ignore"):  # (as a launch runs)
        float_to_int(x, out)
    np.testing.assert_array_equal(out, numerics.convert(x, integer))


def test_float_to_int_with_every_value_out_of_range() -> None:
    """A tile whose values all need saturating (the masked writes' worst case)."""
    x = np.array([-1e30, 1e30, np.nan, -np.inf] * 64, np.float32).reshape(16, 16)
    out = np.empty(x.shape, np.int32)
    with np.errstate(all="ignore"):
        float_to_int(x, out)
    want = np.array([-(2**31), 2**31 - 1, 0, -(2**31)] * 64, np.int32).reshape(16, 16)
    np.testing.assert_array_equal(out, want)

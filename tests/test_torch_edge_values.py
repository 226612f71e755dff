"""`backend="dvm"` against eager at the edges of the dtypes: extreme integers, values
a float type rounds or overflows to infinity, NaN and signed zeros, through ops whose
result depends on how torch promotes and rounds. Compared bit for bit (NaNs equal)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import dvm.torch  # noqa: E402, F401

F = torch.nn.functional


def same_as_eager(fn: Callable[..., Any], *arguments: Any) -> None:
    torch._dynamo.reset()
    got = torch.compile(fn, backend="dvm", dynamic=True)(*arguments)
    torch.testing.assert_close(got, fn(*arguments), rtol=0, atol=0, equal_nan=True)


def mixed_arithmetic(a: Any, b: Any) -> Any:
    quotients = a / b, torch.fmod(a, b), torch.remainder(a, b)
    return *quotients, a * b, a + b, a == b, a * 2.5 + 0.5  # (int tensor * float: float32)


@pytest.mark.parametrize(
    ("ints", "floats"),
    [
        # int32 2**31 - 1 is inf as a float16, 70000 too; 16777217 is 16777216 as a float32
        ([2**31 - 1, -(2**31), 70000, 16777217, 5], torch.float16),
        ([2**31 - 1, -(2**31), 70000, 16777217, 5], torch.float32),
        ([32767, -32768, 257, 259, 5], torch.bfloat16),  # (257 is 256 as a bfloat16)
    ],
)
def test_an_integer_tensor_is_cast_to_the_float_tensors_dtype_first(
    ints: list[int], floats: Any
) -> None:
    """torch casts the integer tensor to the float one's dtype, then computes; numpy's
    promotion computed in a wider dtype (int32 / float16 in float64: 2**31 - 1 / 65504
    was 32800, where torch's is inf)."""
    dtype = torch.int16 if floats == torch.bfloat16 else torch.int32
    a = torch.tensor(ints, dtype=dtype)
    b = torch.tensor([65504.0, 2.0, 3.0, 1.0, -0.0], dtype=floats)
    same_as_eager(mixed_arithmetic, a, b)


def test_atan2_of_a_half_and_an_integer_tensor_in_the_halfs_dtype() -> None:
    """`atan2(inf, int32 2**31 - 1)` beside a half is pi/4: the int is inf as a float16."""
    y = torch.tensor([float("inf"), 1.0, -0.0], dtype=torch.float16)
    x = torch.tensor([2**31 - 1, 70000, -5], dtype=torch.int32)
    same_as_eager(torch.atan2, y, x)
    same_as_eager(torch.atan2, y[0], x)  # (a 0-d half too)
    wide = torch.tensor(2**63 - 1)  # (two integers: each a float32, no wrap to int32)
    same_as_eager(torch.copysign, x, wide)


def test_fmin_and_fmax_of_an_int8_tensor_and_a_0d_uint8_in_int8() -> None:
    """A 0-d tensor of the same category takes the tensor's dtype: 255 is -1 as an int8."""
    a = torch.tensor([-2, 3, 100], dtype=torch.int8)
    b = torch.tensor(255, dtype=torch.uint8)
    same_as_eager(lambda x, y: (torch.fmin(x, y), torch.fmax(y, x)), a, b)


def half_with_a_0d_float(x: Any, s: Any) -> Any:
    return x + s, x - s, torch.fmod(x, s), torch.remainder(x, s), x * s, x / s, s / x


def test_a_0d_float32_beside_a_half_tensor_rounds_as_eager() -> None:
    """A 0-d float32 beside a float16 tensor is rounded to a half first (`+`, `-`,
    `fmod`, and a dividend), except by `mul` and `div`, which read it as a float32:
    3.00146 is 3.00195 as a half, so `-2.5 + s` is 0.50195 in eager, not 0.50146."""
    x = torch.tensor([1.0, 3.0, 65504.0, 0.1, 7.0, -2.5], dtype=torch.float16)
    same_as_eager(half_with_a_0d_float, x, torch.tensor(3.00146484375))


def test_integer_floor_division_by_the_types_minimum() -> None:
    """`17 // -32768` is -1: `a - a % b` leaves int16's range there."""
    a = torch.tensor([17, -17, 32767, -32768, 0, -1], dtype=torch.int16)
    b = torch.tensor([-32768, -32768, -32768, -32768, -32768, 3], dtype=torch.int16)
    same_as_eager(lambda x, y: torch.div(x, y, rounding_mode="floor"), a, b)


def test_a_0d_integer_tensor_is_cast_to_the_other_tensors_integer_dtype() -> None:
    """torch computes an int8 tensor with a 0-d int64 one in int8: 300 is 44 there, and
    a shift by 256 (int32) shifts a uint8 by 0."""
    a = torch.tensor([44, 3, -1], dtype=torch.int8)
    shifts = torch.tensor(256, dtype=torch.int32)

    def compare_and_shift(x: Any, y: Any, s: Any) -> Any:
        return x == y, x < y, x.to(torch.uint8) << s, x.to(torch.uint8) >> s, x + y

    same_as_eager(compare_and_shift, a, torch.tensor(300), shifts)


def test_the_sign_of_nan_is_zero_as_torchs() -> None:
    """torch's `sign` is `(0 < x) - (x < 0)`: 0 for NaN (numpy's is NaN), +0 for -0.0."""
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([nan, -nan, -0.0, 0.0, -2.0, 3.0, inf, -inf, 1e-45])
    same_as_eager(lambda v: (torch.sign(v), torch.sgn(v), torch.sign(v.bfloat16())), x)
    assert not torch.sign(x)[2].signbit()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_half_times_a_python_float_is_rounded_once(dtype: Any) -> None:
    """torch multiplies (divides) a half by a Python float in float32 and rounds once;
    rounding 0.1 to the half first put a third of the products an ulp off."""
    x = (torch.randn(300, generator=torch.Generator().manual_seed(0)) * 10).to(dtype)
    same_as_eager(lambda v: (v * 0.1, 0.1 * v, v / 0.3, F.leaky_relu(v), F.leaky_relu(v, 0.2)), x)


def test_gcd_of_int8_and_uint8_is_taken_in_int16() -> None:
    """torch promotes first: int8's -128 is 128 in int16 (int8's `abs` wraps it)."""
    a = torch.tensor([-128, 0, 100, -5, -128], dtype=torch.int8)
    b = torch.tensor([255, 0, 6, 127, 0], dtype=torch.uint8)
    same_as_eager(lambda x, y: (torch.gcd(x, y), torch.lcm(x, y)), a, b)


def with_alpha(x: Any, y: Any) -> Any:
    return torch.add(x, y, alpha=0.3), torch.sub(x, y, alpha=3), torch.rsub(x, y, alpha=0.7)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_a_sum_with_alpha_is_rounded_once(dtype: Any) -> None:
    """torch's `a + alpha * b` is a fused multiply-add on float32 (a half's in float32,
    with alpha, and a number `b`, rounded to the half first); the product rounded
    before the sum put a sixth to a quarter of the results an ulp off. (256 elements:
    eager's scalar loop for a tail shorter than its vectors rounds the product first.)"""
    generator = torch.Generator().manual_seed(1)
    x, y = ((torch.randn(2, 256, generator=generator) * 3).to(dtype)).unbind()
    same_as_eager(with_alpha, x, y)
    same_as_eager(lambda v: torch.sub(v, 0.3, alpha=0.7), x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_elu_var_and_rsqrt_of_halves_are_rounded_once(dtype: Any) -> None:
    """torch's kernels compute them in float32: `selu` of a half was an ulp off at a
    quarter of the elements, `var` at a third of the rows, `rsqrt` at a quarter."""
    x = (torch.randn(48, 64, generator=torch.Generator().manual_seed(2)) * 3).to(dtype)
    same_as_eager(lambda v: (F.selu(v), F.elu(v, 0.5), torch.var(v, 1), torch.var_mean(v, 0)), x)
    same_as_eager(torch.rsqrt, x.abs())


def test_a_0d_float_as_the_first_factor_is_rounded_to_the_half() -> None:
    """Eager's `mul` reads a 0-d float tensor as a float32 beside a half only as the
    second operand; as the first it is rounded to the half like any other operand."""
    x = (torch.randn(300, generator=torch.Generator().manual_seed(3)) * 3).to(torch.bfloat16)
    s = torch.tensor(1.7003)
    same_as_eager(lambda a, b: (a * b, b * a, torch.ldexp(a, x)), s, x)


def signed_zeros(x: Any, zeros: Any) -> Any:
    return (
        -x,
        x * 0,
        x * -0.0,
        torch.copysign(torch.ones_like(x), x),
        torch.round(x),
        torch.trunc(x),
        torch.ceil(x),
        zeros.sum(0),
        zeros.cumsum(0),
        torch.where(x > 0, x, zeros[0]),
        torch.abs(x),
        x / float("inf"),
    )


def test_the_sign_of_a_zero_is_eagers() -> None:
    """-0.0 where eager gives it: negations and products of zeros, `copysign`, the
    roundings of small negatives, sums and `where` of -0.0s. (Which of two equal zeros
    `minimum`, `maximum`, `clamp` and `relu` return is not: docs/torch.md.)"""
    x = torch.tensor([-0.0, 0.0, -0.3, 0.3, -0.7, -1e-30, -0.5, 0.5, -1.5, 2.5])
    zeros = torch.full((3, 10), -0.0)
    torch._dynamo.reset()
    got = torch.compile(signed_zeros, backend="dvm", dynamic=True)(x, zeros)
    for actual, expected in zip(got, signed_zeros(x, zeros), strict=True):
        assert torch.equal(actual, expected)
        assert torch.equal(torch.signbit(actual), torch.signbit(expected)), (actual, expected)


FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


@pytest.mark.parametrize("dtype", FLOATS)
def test_ldexp_by_an_exponent_of_another_float_dtype(dtype: Any) -> None:
    """Eager's power's dtype: a 0-d exponent beside a tensor of another dtype is no
    power of its own dtype where `x` is a half or float64 (2 ** 2.5 as a bfloat16 put
    a float16 `ldexp` an ulp off), a tensor exponent is (2 ** 20 as a float16 is inf).
    Bit for bit."""
    x = (torch.randn(40, generator=torch.Generator().manual_seed(3)) * 100).to(dtype)
    for other in FLOATS:
        for exponent in (torch.tensor(2.5), torch.tensor(-7.3), torch.arange(-20.0, 20.0)):
            same_as_eager(torch.ldexp, x, exponent.to(other))

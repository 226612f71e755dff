"""Elementwise ATen ops composed of the dialect's (`dvm/torch/aten_math.py`): each on
every pair of edge values (zeros of either sign, infinities, NaN, the extremes of
float32, subnormals), in each float dtype, on dvm and as eager gives them."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import dvm.torch  # noqa: E402

EDGES = [0.0, -0.0, 1.0, -1.0, 2.5, -3.75, 0.3, 1e-30, -1e-30, 1e30, -1e30, 3e38, -3e38,
         1e-45, math.inf, -math.inf, math.nan]  # fmt: skip
FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def every_pair(dtype: Any) -> tuple[Any, Any]:
    """Two tensors holding every ordered pair of `EDGES`."""
    a = torch.tensor([p for p in EDGES for _ in EDGES], dtype=dtype)
    b = torch.tensor([q for _ in EDGES for q in EDGES], dtype=dtype)
    return a, b


def on_dvm(fn: Callable[..., Any], *arguments: Any) -> Any:
    """`fn` compiled, on `arguments`, checked to have run wholly on dvm."""
    torch._dynamo.reset()
    before = len(dvm.torch.reports())
    result = torch.compile(fn, backend="dvm", dynamic=True)(*arguments)
    reports = dvm.torch.reports()[before:]
    assert reports and not any(r["fallbacks"] for r in reports), reports
    return result


def assert_same(actual: Any, expected: Any, exact: bool) -> None:
    """Equal (NaN where eager's is; the same sign where eager's is a zero or an
    infinity), or within torch's tolerance of the dtype unless `exact`."""
    assert actual.dtype == expected.dtype
    signed = (expected == 0) | expected.isinf()
    assert torch.equal(actual[signed].signbit(), expected[signed].signbit())
    if exact:
        assert torch.equal(actual.isnan(), expected.isnan())
        assert torch.equal(actual[~expected.isnan()], expected[~expected.isnan()])
    else:
        torch.testing.assert_close(actual, expected, equal_nan=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_atan2_gives_each_quadrant_and_ieees_angles_of_zeros_and_infinities(dtype: Any) -> None:
    y, x = every_pair(dtype)
    assert_same(on_dvm(torch.atan2, y, x), torch.atan2(y, x), exact=False)


@pytest.mark.parametrize("dtype", FLOATS)
def test_hypot_neither_overflows_nor_loses_an_infinity_beside_a_nan(dtype: Any) -> None:
    a, b = every_pair(dtype)
    assert_same(on_dvm(torch.hypot, a, b), torch.hypot(a, b), exact=False)


@pytest.mark.parametrize("function", [torch.fmin, torch.fmax])
def test_fmin_and_fmax_ignore_a_nan_operand(function: Any) -> None:
    a, b = every_pair(torch.float32)
    expected = function(a, b)
    actual = on_dvm(function, a, b)
    # (the sign of a zero tied with a zero of the other sign is not torch's to keep:
    # its own kernels differ by dtype)
    ties = (a == 0) & (b == 0)
    assert_same(actual[~ties], expected[~ties], exact=True)
    assert torch.equal(actual[ties], expected[ties])


@pytest.mark.parametrize("decimals", [2, -1])
@pytest.mark.parametrize("dtype", FLOATS)
def test_round_to_decimals_is_torchs_scaling_and_rounding(decimals: int, dtype: Any) -> None:
    spread = torch.randn(64, generator=torch.Generator().manual_seed(0)) * 1000
    ties = torch.tensor([2.675, 0.125, -0.125, 1234.5, 0.5, -2.5])
    x = torch.cat([every_pair(dtype)[0][:: len(EDGES)], spread.to(dtype), ties.to(dtype)])
    expected = torch.round(x, decimals=decimals)
    assert_same(on_dvm(lambda t: torch.round(t, decimals=decimals), x), expected, exact=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_ldexp_multiplies_by_torchs_power_of_two(dtype: Any) -> None:
    x = every_pair(dtype)[0]
    exponents = torch.tensor([-3, 0, 5, 100, -140, 127, -1]).repeat(x.numel())[: x.numel()]
    assert_same(on_dvm(torch.ldexp, x, exponents), torch.ldexp(x, exponents), exact=True)


def test_atan2_of_integers_is_a_float32_angle() -> None:
    y = torch.arange(-6, 6).reshape(3, 4)
    x = y.flip(0)
    assert_same(on_dvm(torch.atan2, y, x), torch.atan2(y, x), exact=False)


@pytest.mark.parametrize(
    ("offset", "dim1", "dim2"), [(0, 0, 1), (2, 0, 1), (-2, 0, 1), (1, 2, 0), (-1, -1, 1)]
)
def test_diagonal_at_an_offset_of_any_two_dims_over_several_sizes(
    offset: int, dim1: int, dim2: int
) -> None:
    def diagonal(x: Any) -> Any:
        return torch.diagonal(x, offset, dim1, dim2) * 2

    torch._dynamo.reset()
    run = torch.compile(diagonal, backend="dvm", dynamic=True)
    generator = torch.Generator().manual_seed(0)
    for shape in [(4, 5, 3), (6, 3, 4), (7, 7, 7)]:
        x = torch.randn(shape, generator=generator)
        assert torch.equal(run(x), diagonal(x))
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[-3:])


def test_a_diagonal_returned_is_a_view_of_the_input() -> None:
    x = torch.randn(5, 5, generator=torch.Generator().manual_seed(0))
    diagonal = on_dvm(lambda t: torch.diagonal(t, 1), x)
    diagonal.add_(100)
    assert torch.equal(torch.diagonal(x, 1), diagonal)


def test_diagonal_scatter_and_the_gradient_of_a_diagonal_run_on_dvm() -> None:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(4, 5, 3, generator=generator)
    source = torch.randn(5, 3, generator=generator)
    scattered = on_dvm(lambda t, s: torch.diagonal_scatter(t, s, 1, 2, 0), x, source)
    assert torch.equal(scattered, torch.diagonal_scatter(x, source, 1, 2, 0))
    leaf = x.clone().requires_grad_()
    squares = on_dvm(lambda t: (torch.diagonal(t, -1, 0, 1) ** 2).sum(), leaf)
    (gradient,) = torch.autograd.grad(squares, leaf)
    assert torch.equal(
        gradient, torch.autograd.grad((torch.diagonal(leaf, -1) ** 2).sum(), leaf)[0]
    )


@pytest.mark.parametrize("dtype", FLOATS)
def test_copysign_and_signbit_read_the_sign_bits_of_zeros_and_computed_nans(dtype: Any) -> None:
    a, b = every_pair(dtype)
    assert_same(on_dvm(torch.copysign, a, b), torch.copysign(a, b), exact=True)
    assert_same(on_dvm(lambda t: torch.copysign(t, -2.0), a), torch.copysign(a, -2.0), exact=True)
    # (0 / 0 is a NaN with its sign bit set; torch's bf16 rounding clears it, dvm's not)
    computed = torch.tensor([0.0, -0.0, 1.0]) / 0 if dtype != torch.bfloat16 else torch.zeros(0)
    x = torch.cat([b, computed.to(dtype), -b])
    assert torch.equal(on_dvm(torch.signbit, x), torch.signbit(x))


def compiled_on_dvm(fn: Callable[..., Any], *calls: tuple[Any, ...]) -> list[Any]:
    """`fn` compiled once, on each call's arguments in turn (later sizes reuse the
    graph), checked to have run wholly on dvm; the results."""
    torch._dynamo.reset()
    before = len(dvm.torch.reports())
    run = torch.compile(fn, backend="dvm", dynamic=True)
    results = [run(*arguments) for arguments in calls]
    reports = dvm.torch.reports()[before:]
    assert reports and not any(r["fallbacks"] for r in reports), reports
    return results


def divisors(n: int, dtype: Any, seed: int) -> tuple[Any, Any]:
    """Dividends of both signs and nonzero divisors of both signs, n x 3."""
    generator = torch.Generator().manual_seed(seed)
    a = torch.randint(-100, 100, (n, 3), generator=generator)
    b = torch.randint(1, 9, (n, 3), generator=generator)
    b = b * (torch.randint(0, 2, (n, 3), generator=generator) * 2 - 1)
    return a.to(dtype), b.to(torch.int8 if dtype == torch.uint8 else dtype)


@pytest.mark.parametrize("dtype", [torch.int32, torch.uint8])
def test_integer_division_by_a_tensor_rounds_toward_floor_or_zero_as_torch(dtype: Any) -> None:
    def both(a: Any, b: Any) -> Any:
        return torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc")

    calls = [divisors(n, dtype, seed=n) for n in (5, 9)]
    for arguments, result in zip(calls, compiled_on_dvm(both, *calls), strict=True):
        for actual, expected in zip(result, both(*arguments), strict=True):
            assert actual.dtype == expected.dtype and torch.equal(actual, expected)


@pytest.mark.parametrize("dtype", FLOATS)
def test_nextafter_steps_one_float_across_binades_subnormals_and_infinities(dtype: Any) -> None:
    info = torch.finfo(dtype)
    tiniest = torch.tensor(info.smallest_normal, dtype=dtype) * info.eps  # (2^(emin-p+1))
    steps = [tiniest * k for k in (1, 2, 3, 7, 8, 9, 15, 16, 17)] + [torch.tensor(info.max)]
    edges = torch.cat([torch.tensor(EDGES, dtype=dtype), *(s.to(dtype).reshape(1) for s in steps)])
    a, b = edges.repeat_interleave(len(edges)), edges.repeat(len(edges))
    calls = [(a, b), (b[::5], -a[::5])]
    for arguments, actual in zip(calls, compiled_on_dvm(torch.nextafter, *calls), strict=True):
        assert_same(actual, torch.nextafter(*arguments), exact=True)


def gcd_operands(dtype: Any, seed: int) -> tuple[Any, Any]:
    """Every pair of edge values (zeros, signs, the extremes, the longest Euclid chain of
    the dtype: consecutive Fibonacci numbers), then random ones; the dtype's minimum
    left out, whose `lcm` eager computes as `INT_MIN / -1`, which traps."""
    info = torch.iinfo(dtype)
    fibonacci = [1, 2]
    while fibonacci[-1] + fibonacci[-2] <= info.max:
        fibonacci.append(fibonacci[-1] + fibonacci[-2])
    edges = torch.tensor([0, 1, -1, info.max, info.min + 1, 6, -4, 12, *fibonacci[-2:]])
    edges = edges.clamp(info.min + 1, info.max)
    drawn = torch.randint(
        info.min + 1, info.max, (2, 7), generator=torch.Generator().manual_seed(seed)
    )
    a = torch.cat([edges.repeat_interleave(len(edges)), drawn[0]])
    b = torch.cat([edges.repeat(len(edges)), drawn[1]])
    return a.to(dtype), b.to(dtype)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int16, torch.uint8])
def test_gcd_and_lcm_give_eagers_signs_and_wrapped_products(dtype: Any) -> None:
    def both(a: Any, b: Any) -> Any:
        return torch.gcd(a, b), torch.lcm(a, b)

    calls = [gcd_operands(dtype, 0), tuple(x[::3] for x in gcd_operands(dtype, 1))]
    for arguments, result in zip(calls, compiled_on_dvm(both, *calls), strict=True):
        for actual, expected in zip(result, both(*arguments), strict=True):
            assert actual.dtype == expected.dtype and torch.equal(actual, expected)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.int64])
def test_lcm_at_the_minimum_wraps_where_eager_traps(dtype: Any) -> None:
    """`lcm(INT_MIN, INT_MAX)`: the gcd is -1, and eager's `INT_MIN / -1` kills the
    process with SIGFPE; dvm's division wraps, so the product is C's wrapped one, the
    minimum (as for `lcm(INT_MIN, -1)`, which eager computes). The gcds are eager's."""
    info = torch.iinfo(dtype)
    a = torch.tensor([info.min, info.max, info.min, info.min, info.min], dtype=dtype)
    b = torch.tensor([info.max, info.min, -1, info.min, 0], dtype=dtype)
    ((gcd, lcm),) = compiled_on_dvm(lambda a, b: (torch.gcd(a, b), torch.lcm(a, b)), (a, b))
    assert torch.equal(gcd, torch.gcd(a, b))
    assert lcm.tolist() == [info.min] * 4 + [0]


def test_an_integer_division_by_zero_raises_torchs_error() -> None:
    def computed(a: Any, b: Any) -> Any:
        return torch.div(a, b - 1, rounding_mode="floor")

    a, b = divisors(4, torch.int32, seed=0)
    for fn, zero in [(lambda a, b: a // b, b * 0), (computed, b * 0 + 1)]:
        (result,) = compiled_on_dvm(fn, (a, b.abs() + 1))
        assert torch.equal(result, fn(a, b.abs() + 1))
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            torch.compile(fn, backend="dvm", dynamic=True)(a, zero)


def test_ops_torch_refuses_for_bools_raise_its_error() -> None:
    """`y - mask`, `-mask`, `mask.relu()`, `mask.var()`, `mask.softmax(0)`: numpy computes
    them, torch raises (its dtype checks run in the kernel, not while tracing)."""
    refused = [lambda y, m: y - m, lambda y, m: -m, lambda y, m: m.relu()]
    refused += [lambda y, m: m.var(), lambda y, m: m.softmax(0)]
    y, mask = torch.randn(3, 4), torch.randn(3, 4) > 0
    for fn in refused:
        with pytest.raises((RuntimeError, NotImplementedError)):
            fn(y, mask)
        with pytest.raises((RuntimeError, NotImplementedError)):
            torch.compile(fn, backend="dvm", dynamic=True)(y, mask)


@pytest.mark.parametrize("dtype", FLOATS)
def test_remainder_and_fmod_give_a_zero_the_dividends_sign_as_torch(dtype: Any) -> None:
    """torch's `remainder` is `fmod` plus the divisor where their signs differ: a zero
    keeps the dividend's sign (numpy's `remainder` gives it the divisor's). (Eager's
    float32 and bfloat16 loops compute through a float32 quotient, NaN where that
    overflows: 1 by 1e-45, 1e30 by 1e-30; dvm's `fmod` is exact there, so those pairs
    are left out.)"""
    a, b = every_pair(dtype)
    if dtype in (torch.float32, torch.bfloat16):
        finite = ~((a.double() / b.double()).abs() > torch.finfo(torch.float32).max)
        a, b = a[finite], b[finite]
    for fn in (torch.remainder, torch.fmod):
        assert_same(on_dvm(fn, a, b), fn(a, b), exact=True)
        assert_same(on_dvm(lambda a, fn=fn: fn(a, -3.0), a), fn(a, -3.0), exact=True)


def test_an_integer_remainder_by_zero_raises_torchs_error() -> None:
    a, b = divisors(4, torch.int64, seed=2)
    for fn in (torch.remainder, torch.fmod):
        (result,) = compiled_on_dvm(fn, (a, b))
        assert torch.equal(result, fn(a, b))
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            torch.compile(fn, backend="dvm", dynamic=True)(a, b * 0)


def test_a_rounded_division_of_integers_by_floats_is_a_float_quotient() -> None:
    a, b = divisors(6, torch.int64, seed=1)
    (floor, trunc) = compiled_on_dvm(
        lambda a, b: (
            torch.div(a, b * 0.5, rounding_mode="floor"),
            torch.div(a, 0.7, rounding_mode="trunc"),
        ),
        (a, b.float()),
    )[0]
    assert torch.equal(floor, torch.div(a, b.float() * 0.5, rounding_mode="floor"))
    assert torch.equal(trunc, torch.div(a, 0.7, rounding_mode="trunc"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_erfc_keeps_its_relative_precision_in_the_tails(dtype: Any) -> None:
    """erfc over [-10, 10] and at the edges as eager gives it, relatively (within four
    of the dtype's epsilons; 1e-14 in float64) down to the smallest normal number,
    where 1 - erf(x) keeps no digit (erfc(5) is 1.5e-12)."""
    x = torch.cat([torch.linspace(-10, 10, 4001, dtype=torch.float64), every_pair(dtype)[0]])
    x = x.to(dtype)
    actual, expected = on_dvm(torch.erfc, x), torch.erfc(x)
    assert_same(actual, expected, exact=False)
    finfo = torch.finfo(dtype)
    rtol = 1e-14 if dtype == torch.float64 else 4 * finfo.eps
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=finfo.tiny, equal_nan=True)


def eagers_on_dvm(functions: Callable[[Any], tuple[Any, ...]], x: Any) -> tuple[Any, ...]:
    """`functions` compiled once, on `x` and then on every third element of it, each
    result checked against eager's (`assert_same`); the results on `x`."""
    calls = [(x,), (x[::3],)]
    runs = compiled_on_dvm(functions, *calls)
    for (arguments,), results in zip(calls, runs, strict=True):
        for actual, expected in zip(results, functions(arguments), strict=True):
            assert_same(actual, expected, exact=False)
    return runs[0]


def polygammas(x: Any) -> tuple[Any, ...]:
    return tuple(torch.polygamma(n, x) for n in range(1, 6))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_polygamma_of_orders_1_to_5_gives_eagers_values_poles_and_infinities(dtype: Any) -> None:
    """Over both signs, the poles (0, the negative integers, -inf: +-inf, or trigamma's
    large finite values at the negative integers, as eager's) and +inf (NaN); in float64
    within 1e-12 of mpmath, relatively, away from the poles and from the zeros (trigamma
    within 1e-9: its asymptotic series is torch's, which stops at that)."""
    import mpmath

    spread = torch.randn(40, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    points = [1e-30, 0.49999, 15.9, 16.0, 1e10, -1e5 - 0.5, -1.0, -2.0, -3.0, *EDGES]
    x = torch.cat([torch.linspace(-9.7, 12, 120, dtype=torch.float64), spread * 30,
                   torch.tensor(points, dtype=torch.float64)]).to(dtype)  # fmt: skip
    results = eagers_on_dvm(polygammas, x)
    if dtype != torch.float64:
        return
    for order, actual in enumerate(results, start=1):
        for point, value in zip(x.tolist(), actual.tolist(), strict=True):
            if math.isfinite(point) and point == round(point) and point <= 0:
                continue
            if math.isfinite(point) and abs(value) > 1e-3 and 0 < abs(point) < 1e4:
                exact = float(mpmath.polygamma(order, point))
                tolerance = 1e-9 if order == 1 else 1e-12
                assert abs(value - exact) <= tolerance * abs(exact), (order, point)


BESSELS = {"i0": torch.i0, "i0e": torch.special.i0e, "i1": torch.special.i1,
           "i1e": torch.special.i1e}  # fmt: skip


def bessels(x: Any) -> tuple[Any, ...]:
    return tuple(f(x) for f in BESSELS.values())


def bessels_sum(x: Any) -> Any:
    return torch.stack(bessels(x)).sum()


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_modified_bessel_functions_match_mpmath_and_eagers_overflows(dtype: Any) -> None:
    """i0, i1 and their scaled forms: eager's values, its infinities (float32's exp
    overflows from 88.73) and NaNs (i0 and i1 of an infinity); in float64 within 2e-15 of
    mpmath, relatively, wherever eager's exp does not overflow (to 709.78)."""
    import mpmath

    generator = torch.Generator().manual_seed(0)
    spread = torch.randn(60, generator=generator, dtype=torch.float64) * 200
    x = torch.cat([torch.linspace(-40, 40, 161, dtype=torch.float64), spread,
                   torch.tensor([7.99, 8.0, 88.72, 88.73, 709.7, 709.8, 1e300]),
                   torch.tensor(EDGES, dtype=torch.float64)]).to(dtype)  # fmt: skip
    results = eagers_on_dvm(bessels, x)
    if dtype != torch.float64:
        return
    context = mpmath.mp.clone()
    context.dps = 30
    for name, actual in zip(BESSELS, results, strict=True):
        for point, value in zip(x.tolist(), actual.tolist(), strict=True):
            if not math.isfinite(point) or abs(point) > 709.7 or point == 0:
                continue
            exact = context.besseli(int(name[1]), point)
            exact = exact * context.exp(-abs(context.mpf(point))) if name.endswith("e") else exact
            assert abs(value - float(exact)) <= 2e-15 * abs(float(exact)), (name, point)


def test_the_gradients_of_the_bessel_functions_run_on_dvm() -> None:
    x = torch.linspace(-12, 12, 41, dtype=torch.float64, requires_grad=True)
    (gradient,) = torch.autograd.grad(on_dvm(bessels_sum, x), x)
    (expected,) = torch.autograd.grad(bessels_sum(x), x)
    torch.testing.assert_close(gradient, expected)


def test_the_gradient_of_erfc_runs_on_dvm() -> None:
    x = torch.linspace(-6, 6, 25, dtype=torch.float64, requires_grad=True)
    (gradient,) = torch.autograd.grad(on_dvm(lambda t: torch.erfc(t * 1.5).sum(), x), x)
    (expected,) = torch.autograd.grad(torch.erfc(x * 1.5).sum(), x)
    torch.testing.assert_close(gradient, expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_lgamma_and_digamma_give_eagers_values_over_both_signs(dtype: Any) -> None:
    """Over [-10, 10] (off the poles by 1e-3), magnitudes from 1e-30 to 1e30 of both
    signs and the edges (the poles at 0, -0 and the negative integers, infinities)."""
    magnitudes = torch.logspace(-30, 30, 61, dtype=torch.float64)
    x = torch.cat(
        [
            torch.linspace(-10, 10, 2001, dtype=torch.float64) + 1e-3,
            magnitudes,
            0.25 - magnitudes,
            torch.tensor([-3.0, -1.0, 1.0, 2.0, 1.4616321449683622, -2.4570247382208006]),
            every_pair(torch.float64)[0][:: len(EDGES)],
        ]
    ).to(dtype)
    values, slopes = on_dvm(lambda t: (torch.lgamma(t), torch.digamma(t)), x)
    assert_same(values, torch.lgamma(x), exact=False)
    assert_same(slopes, torch.digamma(x), exact=False)


EPSILON_64 = torch.finfo(torch.float64).eps


def test_lgamma_near_its_zeros_keeps_its_relative_digits() -> None:
    """Near 1 and 2, where lgamma is near 0, within 4 ulps relatively (the shifted Stirling
    series lost them: 6e-3 relatively at 1 + 1e-12); eager's values are correctly rounded."""
    offsets = torch.logspace(-14, math.log10(0.49), 60, dtype=torch.float64)
    x = torch.cat([c + s * offsets for c in (1.0, 2.0) for s in (1, -1)])
    value = on_dvm(torch.lgamma, x)
    expected = torch.lgamma(x)
    assert ((value - expected).abs() <= 4 * EPSILON_64 * expected.abs()).all()
    assert on_dvm(torch.lgamma, torch.tensor([1.0, 2.0], dtype=torch.float64)).tolist() == [0, 0]


def test_the_gradients_of_lgamma_and_polygamma_run_on_dvm() -> None:
    def gammas(t: Any) -> Any:
        return torch.lgamma(t * 1.5).sum() + torch.polygamma(2, t).sum()

    x = torch.linspace(-4.3, 12, 40, dtype=torch.float64, requires_grad=True)
    (gradient,) = torch.autograd.grad(on_dvm(gammas, x), x)
    (expected,) = torch.autograd.grad(gammas(x), x)
    torch.testing.assert_close(gradient, expected)
    torch.testing.assert_close(on_dvm(lambda t: torch.polygamma(0, t), x), torch.digamma(x))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_rounded_division_of_halves_rounds_as_torchs_loops(dtype: Any) -> None:
    """Tensors by tensors: each step rounded to the dtype, as torch's vector loop; by a
    number, in float32 rounded once, as its loop with a scalar. Bit for bit."""

    def divisions(a: Any, b: Any) -> Any:
        floor = torch.div(a, b, rounding_mode="floor")
        return floor, torch.div(a, b, rounding_mode="trunc"), a // 0.3

    generator = torch.Generator().manual_seed(0)
    calls = []
    for n in (50, 90):
        a = (torch.randn(n, generator=generator) * 300).to(dtype)
        b = (torch.randn(n, generator=generator) * 3).to(dtype)
        b[0], a[1] = 0.0, torch.nan
        calls.append((a, b))
    for arguments, results in zip(calls, compiled_on_dvm(divisions, *calls), strict=True):
        for actual, expected in zip(results, divisions(*arguments), strict=True):
            assert_same(actual, expected, exact=True)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_sigmoid_and_silu_of_halves_are_rounded_once(dtype: Any) -> None:
    """As torch's kernels: in float32, rounded once (a rounding per step would put a
    quarter of bfloat16's sigmoids an ulp off, and their gradients, `1 - s`, further)."""
    x = torch.linspace(-12, 12, 4001).to(dtype)
    sigmoid, silu = on_dvm(lambda t: (torch.sigmoid(t), torch.nn.functional.silu(t)), x)
    assert torch.equal(sigmoid, torch.sigmoid(x))
    # (float32's exp, numpy's and torch's, may round a silu within 1e-8 of a tie apart)
    assert int((silu != torch.nn.functional.silu(x)).sum()) <= 2


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_erfcx_keeps_its_relative_precision_up_to_any_size(dtype: Any) -> None:
    """`exp(x^2) erfc(x)` from -26 (where it is 1.4e294) to 1e300, and at the edges
    (torch has none of halves)."""
    sizes = torch.logspace(0, 300, 31, dtype=torch.float64)
    x = torch.cat([torch.linspace(-26, 30, 2001, dtype=torch.float64), sizes])
    x = torch.cat([x.to(dtype), every_pair(dtype)[0][:: len(EDGES)]])
    actual, expected = on_dvm(torch.special.erfcx, x), torch.special.erfcx(x)
    finfo = torch.finfo(dtype)
    rtol = 1e-13 if dtype == torch.float64 else 4 * finfo.eps
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=finfo.tiny, equal_nan=True)


def exact_inverse_erf(a: float, w: float) -> float:
    """erfinv(a) for a in [0, 1) by mpmath, given w = 1 - a, at the precision w needs."""
    import mpmath

    context = mpmath.mp.clone()
    context.dps = 25 + int(-math.log10(w))
    return float(context.erfinv(a if a < 0.5 else 1 - context.mpf(w)))


def inverse_erfs(x: Any) -> tuple[Any, ...]:
    return torch.erfinv(x), torch.special.ndtri((x + 1) / 2)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16, torch.float16])
def test_erfinv_and_ndtri_give_eagers_values_infinities_and_nans(dtype: Any) -> None:
    """Over [-1, 1], near its ends and at the edges (-1 and 1 give infinities, beyond
    NaN, zeros keep their sign), within the dtype's tolerance of eager (which has no
    ndtri of halves); in float64 within 1e-15 of mpmath, relatively, where 1 - |x|
    (erfinv) or p or 1 - p (ndtri) is small, p down to 1e-300."""
    near = 1 - torch.logspace(-15.9, -0.4, 10, dtype=torch.float64)
    x = torch.cat([torch.linspace(-1, 1, 401, dtype=torch.float64), near, -near,
                   torch.tensor(EDGES, dtype=torch.float64)]).to(dtype)  # fmt: skip
    if dtype in (torch.float64, torch.float32):
        for actual, expected in zip(eagers_on_dvm(inverse_erfs, x), inverse_erfs(x), strict=True):
            assert_same(actual, expected, exact=False)
    else:
        assert_same(on_dvm(torch.erfinv, x), torch.erfinv(x), exact=False)
    if dtype != torch.float64:
        return
    tiny = torch.logspace(-300, -1, 12, dtype=torch.float64)
    erfinv, lower, upper = on_dvm(
        lambda t, p: (torch.erfinv(t), torch.special.ndtri(p), torch.special.ndtri(t)), near, tiny
    )
    for point, inverse, quantile in zip(
        near.tolist(), erfinv.tolist(), upper.tolist(), strict=True
    ):
        assert abs(inverse - exact_inverse_erf(point, 1 - point)) <= 1e-15 * inverse, point
        exact = math.sqrt(2) * exact_inverse_erf(2 * point - 1, 2 - 2 * point)
        assert abs(quantile - exact) <= 1e-15 * exact, point
    for p, quantile in zip(tiny.tolist(), lower.tolist(), strict=True):
        exact = -math.sqrt(2) * exact_inverse_erf(1 - 2 * p, 2 * p)
        assert abs(quantile - exact) <= 1e-15 * -exact, p


def test_the_gradients_of_erfinv_and_ndtri_run_on_dvm() -> None:
    def inverses(t: Any) -> Any:
        return torch.erfinv(t * 0.9).sum() + torch.special.ndtri((t + 1) / 2.5).sum()

    x = torch.linspace(-0.99, 0.99, 41, dtype=torch.float64, requires_grad=True)
    (gradient,) = torch.autograd.grad(on_dvm(inverses, x), x)
    (expected,) = torch.autograd.grad(inverses(x), x)
    torch.testing.assert_close(gradient, expected)


def bessel_js(x: Any) -> tuple[Any, ...]:
    return torch.special.bessel_j0(x), torch.special.bessel_j1(x)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_bessel_j0_and_j1_match_mpmath_near_their_zeros(dtype: Any) -> None:
    """J0 and J1 over both signs, near their zeros and far out: eager's values in float32
    (eager's float64 ones are 4e-7 off), NaN at the infinities and NaN as eager's, J1 of
    -0 is -0; in float64 within 4e-15 + 2e-14 |J| of mpmath (near a zero no float keeps
    relative digits: the terms that cancel there round by a few 1e-16)."""
    import mpmath

    generator = torch.Generator().manual_seed(0)
    spread = torch.randn(40, generator=generator, dtype=torch.float64) * 300
    zeros = [2.404825557695773, 3.8317059702075125, 5.520078110286311, 7.015586669815619]
    points = [*zeros, 7.99, 8.0, 8.01, 1e-300, 1e4, *EDGES[:2], *EDGES[-3:]]
    x = torch.cat([torch.linspace(-30, 30, 241, dtype=torch.float64), spread,
                   torch.tensor(points, dtype=torch.float64)]).to(dtype)  # fmt: skip
    results = compiled_on_dvm(bessel_js, (x,))[0]
    if dtype == torch.float32:
        for actual, expected in zip(results, bessel_js(x), strict=True):
            assert_same(actual, expected, exact=False)
        return
    assert math.copysign(1.0, results[1][-4].item()) == -1.0  # (J1(-0), EDGES' -0)
    for order, actual in enumerate(results):
        for point, value in zip(x.tolist(), actual.tolist(), strict=True):
            if not math.isfinite(point):
                assert math.isnan(value), point
                continue
            exact = float(mpmath.besselj(order, point))
            assert abs(value - exact) <= 4e-15 + 2e-14 * abs(exact), (order, point)


def modified_bessels(x: Any) -> tuple[Any, ...]:
    return torch.special.modified_bessel_i0(x), torch.special.modified_bessel_i1(x)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_modified_bessel_i0_and_i1_are_i0_and_special_i1(dtype: Any) -> None:
    """torch's other names of I0 and I1: eager's values, overflows and NaNs."""
    points = torch.tensor([88.73, 709.8, *EDGES], dtype=torch.float64)
    x = torch.cat([torch.linspace(-100, 100, 81, dtype=torch.float64), points]).to(dtype)
    for actual, expected in zip(on_dvm(modified_bessels, x), modified_bessels(x), strict=True):
        assert_same(actual, expected, exact=False)


def bessel_ys(x: Any) -> tuple[Any, ...]:
    return torch.special.bessel_y0(x), torch.special.bessel_y1(x)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_bessel_y0_and_y1_match_mpmath_near_their_zeros(dtype: Any) -> None:
    """Y0 and Y1 from 1e-300 to 1e4, near their zeros below 8 and at 8: -inf at 0, NaN
    below 0, at inf and at NaN, as eager's; in float32 within 3e-6 of eager (whose
    float32 values are up to 2e-6 off); in float64 within 2e-15 (1 + |Y|) of mpmath
    (near a zero the terms that cancel round by a few 1e-16, and torch's only keep an
    absolute precision there too)."""
    import mpmath

    generator = torch.Generator().manual_seed(0)
    spread = torch.rand(40, generator=generator, dtype=torch.float64) * 300
    zeros = [0.8935769662791675, 3.957678419314858, 7.086051060301773, 2.197141326031017]
    points = [*zeros, 5.429681040794135, 7.99, 8.0, 8.01, 1e-300, 1e-5, 1e4, *EDGES]
    x = torch.cat([torch.linspace(-2, 30, 161, dtype=torch.float64), spread,
                   torch.tensor(points, dtype=torch.float64)]).to(dtype)  # fmt: skip
    results = on_dvm(bessel_ys, x)
    for actual, expected in zip(results, bessel_ys(x), strict=True):
        torch.testing.assert_close(actual, expected, rtol=4e-7, atol=3e-6, equal_nan=True)
    if dtype != torch.float64:
        return
    for order, actual in enumerate(results):
        for point, value in zip(x.tolist(), actual.tolist(), strict=True):
            if not 0 < point < math.inf:
                continue
            exact = float(mpmath.bessely(order, point))
            assert abs(value - exact) <= 2e-15 * (1 + abs(exact)), (order, point)


def bessel_ks(x: Any) -> tuple[Any, ...]:
    special = torch.special
    return (special.modified_bessel_k0(x), special.modified_bessel_k1(x),
            special.scaled_modified_bessel_k0(x), special.scaled_modified_bessel_k1(x))  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_modified_bessel_k0_and_k1_and_their_scaled_forms_match_mpmath(dtype: Any) -> None:
    """K0, K1, `exp(x) K0` and `exp(x) K1` from 1e-300 to 800 and at the edges: inf at
    0 and -0, 0 at inf, NaN below 0 and at NaN, as eager's (but for float32's smallest
    subnormal, where eager's float32 K1 is NaN and its scaled K0 inf); in float64 within
    2e-15 of mpmath, relatively."""
    import mpmath

    magnitudes = torch.logspace(-300, 2.9, 12, dtype=torch.float64)
    edges = [e for e in EDGES if e != 1e-45 or dtype == torch.float64]
    points = torch.tensor([1.0, 1.001, 90.0, 104.0, *edges], dtype=torch.float64)
    x = torch.cat([torch.linspace(-1, 12, 40, dtype=torch.float64), magnitudes, points])
    x = x.to(dtype)
    results = on_dvm(bessel_ks, x)
    for actual, expected in zip(results, bessel_ks(x), strict=True):
        assert_same(actual, expected, exact=False)
    if dtype != torch.float64:
        return
    for point, *values in zip(x.tolist(), *(r.tolist() for r in results), strict=True):
        if not 0 < point < math.inf:
            continue
        ks = [mpmath.besselk(order, point) for order in (0, 1)]
        exacts = [*ks, *(k * mpmath.exp(point) for k in ks)]
        for index, (value, exact) in enumerate(zip(values, exacts, strict=True)):
            if index >= 2 or point < 700:
                assert abs(value - float(exact)) <= 2e-15 * float(exact), (index, point)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_spherical_bessel_j0_matches_mpmath_near_0_and_its_zeros(dtype: Any) -> None:
    """sin(x)/x: its series below 1/2 and the quotient beyond, at the cut, near the
    zeros (k pi) and far out; 0 at the infinities and NaN at NaN, as eager's; in float64
    within 2 ulps of mpmath, relatively."""
    import mpmath

    zeros = [k * math.pi for k in (1, 2, 7, 100)]
    points = [0.4999999, 0.5, 0.5000001, -0.5, 1e-300, 1e300, *zeros, *EDGES]
    x = torch.cat([torch.linspace(-0.6, 0.6, 61, dtype=torch.float64),
                   torch.linspace(-40, 40, 161, dtype=torch.float64),
                   torch.tensor(points, dtype=torch.float64)]).to(dtype)  # fmt: skip
    actual = on_dvm(torch.special.spherical_bessel_j0, x)
    assert_same(actual, torch.special.spherical_bessel_j0(x), exact=False)
    if dtype != torch.float64:
        return
    for point, value in zip(x.tolist(), actual.tolist(), strict=True):
        if math.isfinite(point):
            exact = float(mpmath.sin(point) / point) if point else 1.0
            assert abs(value - exact) <= 2 * math.ulp(exact), point


def test_airy_ai_matches_mpmath_near_its_zeros_and_far_out() -> None:
    """Ai in float64 and float32 over [-30, 10], near its zeros, at the cuts between
    its three forms, far below 0 (where its phase needs zeta in two floats) and into
    the subnormals above: NaN at the infinities and NaN, as eager's; over [-30, 10] in
    float32 within the dtype's tolerance of eager; within 6 epsilons of mpmath, of Ai
    or, below 0, of its modulus `sqrt(Ai^2 + Bi^2)` (eager's float64 is 3e-6 off near
    -2.3, and its float32 phase keeps no digit at -1e5)."""
    import mpmath

    zeros = [-2.338107410459767, -4.087949444130971, -5.520559828095551, -12.828776752865757]
    cuts = [-(12 ** (2 / 3)), 1.5 ** (2 / 3), -4.1, 0.5]
    far = [-1e4, -123456.7, 1e-300, 60.0, 105.5, 1e10, 1e300, -1e-30, 0.0, -0.0]
    points = [*zeros, *cuts, *far, math.inf, -math.inf, math.nan]
    x = torch.cat([torch.linspace(-30, 10, 161, dtype=torch.float64),
                   torch.tensor(points, dtype=torch.float64)])  # fmt: skip
    narrow = x.float()
    results = on_dvm(lambda a, b: (torch.special.airy_ai(a), torch.special.airy_ai(b)), x, narrow)
    assert_same(results[1][:161], torch.special.airy_ai(narrow[:161]), exact=False)
    for arguments, actual in zip((x, narrow), results, strict=True):
        assert actual[-3:].isnan().all()
        finfo = torch.finfo(actual.dtype)
        for point, value in zip(arguments.tolist(), actual.tolist(), strict=True):
            if math.isfinite(point):
                exact = mpmath.airyai(point)
                scale = math.hypot(exact, mpmath.airybi(point)) if point < 0 else abs(exact)
                assert abs(value - float(exact)) <= 6 * finfo.eps * max(scale, finfo.tiny), point

"""Cases found by running torch's OpInfo samples through `backend="dvm"` (docs/torch.md,
"torch's OpInfo samples"), each written out here so that CI does not depend on torch's
private test database: the op on the sample's inputs, compiled with `dynamic=True`,
against eager, over a second size where the graph is reused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import dvm.torch  # noqa: E402


def compiled(fn: Callable[..., Any]) -> Callable[..., Any]:
    torch._dynamo.reset()
    return torch.compile(fn, backend="dvm", dynamic=True)


def check(fn: Callable[..., Any], *calls: tuple[Any, ...]) -> None:
    """`fn` compiled gives eager's results on each call's arguments, in order (one
    compile: later calls of other sizes reuse the graph)."""
    run = compiled(fn)
    for arguments in calls:
        torch.testing.assert_close(run(*arguments), fn(*arguments), equal_nan=True)


def cube(size: int, seed: int = 0) -> Any:
    return torch.randn(size, size, size, generator=torch.Generator().manual_seed(seed))


# Outputs that are views of an input, by view ops with sizes of the call as arguments:
# AOTAutograd makes them again from the input with `as_strided` at the strides and
# offset of the tensor the graph returns.


def test_the_second_chunk_of_an_input_is_its_second_half() -> None:
    check(lambda x: torch.chunk(x, 2), (cube(5),), (cube(7, seed=1),))


def test_a_chunk_along_the_last_dim_and_unbind_are_views_of_their_input() -> None:
    check(lambda x: torch.chunk(x, 3, -1), (cube(5),), (cube(7, seed=1),))
    check(lambda x: torch.unbind(x, 1), (cube(5),), (cube(7, seed=1),))


def test_an_expand_of_an_input_to_its_sizes_is_a_view_of_it() -> None:
    def expand(x: Any) -> Any:
        return x.expand(x.shape[0], x.shape[0], x.shape[0])

    check(expand, (torch.randn(5, 1, 1),), (torch.randn(7, 1, 1),))


def test_meshgrid_of_inputs_gives_views_of_them() -> None:
    def grid(a: Any, b: Any, c: Any) -> Any:
        return torch.meshgrid(a, b, c, indexing="xy")

    check(grid, (torch.randn(3), torch.randn(()), torch.randn(3)))
    check(grid, (torch.randn(3), torch.randn(4), torch.randn(5)))


def test_a_returned_view_of_an_input_shares_its_memory() -> None:
    x = cube(5)
    second = compiled(lambda x: torch.chunk(x, 2))(x)[1]
    second.zero_()
    assert (x[3:] == 0).all()


# Plans


def test_a_program_of_no_arguments_replays() -> None:
    """`arange` of constant bounds: the program reads no input (its plan's call of it
    had an empty argument list)."""
    run = compiled(lambda: torch.arange(0, 1, dtype=torch.float32))
    for _ in range(2):
        torch.testing.assert_close(run(), torch.arange(0, 1, dtype=torch.float32))


# Sizes of the call as arguments


@pytest.mark.filterwarnings("ignore:std_mean.*degrees of freedom:UserWarning")
def test_a_correction_that_is_an_argument_of_the_call_divides_the_variance() -> None:
    """dynamo makes an int `correction` a float of a size (a `Quotient`)."""

    def std_mean(x: Any, correction: int) -> Any:
        return torch.std_mean(x, dim=[1], correction=correction)

    check(std_mean, *((cube(5, seed=c), c) for c in (2, 3, 4, 7)))


def test_the_keywords_of_an_op_in_torch_are_plain_numbers() -> None:
    """An op that runs in torch gets its keyword arguments as it gets its positional
    ones: sizes as plain numbers (`var_mean`'s `correction`, had its handler failed,
    reached torch as a `Quotient`)."""
    from dvm.torch.graph import to_tensor
    from dvm.torch.sizes import Quotient, Size

    keywords = to_tensor({"correction": Quotient(2.0, "c", 0), "dim": [Size(1, "d", 0)]})
    assert keywords == {"correction": 2.0, "dim": [1]}
    assert type(keywords["dim"][0]) is int


# Handlers


def test_squeezing_a_0d_tensor_along_dim_0_gives_it() -> None:
    """(`linear_cross_entropy` of a 0-d target squeezes it.)"""
    check(lambda x: x.squeeze(0) * 2, (torch.tensor(3.0),))
    check(lambda x: x.squeeze([-1]) + 1, (torch.tensor(3.0),))


def test_a_complex_tensor_of_no_elements_is_made_of_its_parts() -> None:
    check(torch.complex, (torch.randn(0, 1, 3), torch.randn(0, 10, 3)))


def test_a_float_function_of_bools_or_small_ints_is_computed_in_float32() -> None:
    """numpy computes `exp` of a bool or an int8 in float16; torch in float32."""
    check(torch.exp, (torch.arange(-7, 9, dtype=torch.int8),))
    check(torch.sin, (torch.tensor([True, False, True]),))


def test_integer_powers_by_negative_tensor_exponents_run_in_torch() -> None:
    """torch gives 0 (1 and -1 of the bases 1 and -1) where numpy raises."""
    exponents = torch.tensor([[-2, -1, 0, 1, 3]], dtype=torch.int32)
    before = len(dvm.torch.reports())
    check(lambda x: 2**x, (exponents,), (exponents.repeat(2, 2),))
    check(lambda x: x**x, (exponents,), (exponents.repeat(2, 2),))
    check(lambda x: x**3 + 1, (exponents,), (exponents.repeat(2, 2),))
    assert not handler_failures(before)


def handler_failures(before: int) -> list[str]:
    """The reasons, in the reports after the first `before`, of ops that ran in torch
    because their handler failed (a bug of the handler, logged as a warning)."""
    reasons = [r for report in dvm.torch.reports()[before:] for r in report["reasons"].values()]
    return [r for r in reasons if r.startswith("the handler failed")]


def test_integers_are_never_nan_or_infinite_on_dvm() -> None:
    ints = torch.arange(-5, 7, dtype=torch.int32).reshape(3, 4)
    before = len(dvm.torch.reports())
    check(lambda x: (torch.isnan(x), torch.isinf(x), torch.nansum(x)), (ints,), (ints[:2],))
    assert [r["fallbacks"] for r in dvm.torch.reports()[before:]] == [{}]


def test_the_copying_forms_of_view_ops_run_on_dvm_and_own_their_memory() -> None:
    def copies(x: Any) -> Any:
        return (
            torch.view_copy(x, [-1]), torch.permute_copy(x, [2, 0, 1]),
            torch.narrow_copy(x, 1, -2, 2), torch.expand_copy(x[:1], [3, -1, -1]),
            torch.split_with_sizes_copy(x, [1, 2], 2), torch.alias_copy(x),
        )  # fmt: skip

    x = torch.randn(3, 4, 3, generator=torch.Generator().manual_seed(0))
    before = len(dvm.torch.reports())
    check(copies, (x,), (torch.randn(3, 5, 3, generator=torch.Generator().manual_seed(1)),))
    assert [r["fallbacks"] for r in dvm.torch.reports()[before:]] == [{}]
    compiled(torch.alias_copy)(x).zero_()
    assert x.abs().sum() > 0


def test_a_layout_kept_through_index_fill_is_a_copy() -> None:
    """`index_fill` of a transposed input keeps its layout: AOTAutograd writes it as a
    `prims.copy_strided` by strides read (`sym_stride`) from a value whose layout here
    is not eager's (a program's results are contiguous), mixed with the trace's own. In
    torch those strides made rows that overlap; the copy's values are its input's, and
    the output gets eager's strides."""

    def filled(x: Any) -> Any:
        return torch.diff(x, dim=1).index_fill(0, torch.arange(0, x.shape[0], 2), 0)

    def transposed(*shape: int) -> Any:
        return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))

    calls = [transposed(5, 3, 4), transposed(7, 3, 4), transposed(5, 6, 4)]
    run = compiled(filled)
    for x in (c.transpose(-1, -2) for c in calls):
        got, want = run(x), filled(x)
        torch.testing.assert_close(got, want)
        assert got.stride() == want.stride()
    assert "copy_strided" not in dvm.torch.reports()[-1]["fallbacks"]


def test_unfold_and_its_backward_run_on_dvm() -> None:
    def windows(x: Any, weights: Any) -> Any:
        return (x.unfold(1, 3, 2) * weights).sum(), x.unfold(-1, 2, 2), x[0, 0].unfold(0, 1, 1)

    def gradient(x: Any, weights: Any) -> Any:
        x = x.detach().requires_grad_(True)
        return torch.autograd.grad(run(x, weights)[0], x)[0]

    def calls(size: int) -> tuple[Any, Any]:
        x = torch.randn(2, size, 4, generator=torch.Generator().manual_seed(size))
        return x, torch.randn(
            2, (size - 3) // 2 + 1, 4, 3, generator=torch.Generator().manual_seed(size + 1)
        )

    before = len(dvm.torch.reports())
    check(windows, calls(7), calls(10))
    run = compiled(windows)
    for x, weights in (calls(7), calls(10)):
        expected = torch.autograd.grad(windows(x.requires_grad_(True), weights)[0], x)[0]
        torch.testing.assert_close(gradient(x, weights), expected)
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[before:])


def test_a_descending_arange_of_unsigned_integers_runs_on_dvm() -> None:
    """(Its step of -1 is no uint8: the count is made in int64.)"""

    def descending(n: int) -> Any:
        return torch.arange(n, 0, -1, dtype=torch.uint8) + torch.arange(n, dtype=torch.uint8)

    before = len(dvm.torch.reports())
    check(descending, (10,), (13,))
    assert [r["fallbacks"] for r in dvm.torch.reports()[before:]] == [{}]


def test_exp2_and_log10_run_on_dvm_within_torchs_tolerance() -> None:
    """`exp2(x)` is `exp(x ln 2)` in `dvm.lazy`: in float32, 4e-6 off at x = 120."""
    g = torch.Generator().manual_seed(0)
    x = torch.linspace(-120, 120, 2001)
    y = 10 ** (torch.rand(2001, generator=g, dtype=torch.float64) * 60 - 30)
    before = len(dvm.torch.reports())
    check(lambda x, y: (torch.exp2(x), torch.log10(y)), (x, y.float()), (x[:999], y[:999]))
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[before:])


def test_negative_numbers_with_unsigned_integers_give_torchs_wrapped_values() -> None:
    """torch wraps -2 to 254 in a uint8; numpy raises (the op then runs in torch). As
    arguments of the call, the numbers are sizes of it."""

    def negatives(x: Any, k: int) -> Any:
        ids = torch.tensor([0, 2, 2])
        wrapped = torch.scalar_tensor(k, dtype=x.dtype)
        return torch.index_add(x, 0, ids, x[:3], alpha=k), x + wrapped, x - torch.scalar_tensor(-5)

    before = len(dvm.torch.reports())
    unsigned = torch.arange(10, dtype=torch.uint8)
    check(negatives, (unsigned, -2), (unsigned[:7], -3))
    assert not handler_failures(before)


def test_the_inverse_and_hyperbolic_trigonometric_functions_run_on_dvm() -> None:
    def trigonometry(x: Any, y: Any) -> Any:
        unit = torch.tanh(x)  # (inside acos's, asin's and atanh's domain)
        return (
            torch.tan(x) + torch.asin(unit) + torch.acos(unit) + torch.atan(x)
            + torch.sinh(x) + torch.cosh(x) + torch.asinh(x) + torch.acosh(1 + x.abs())
            + torch.atanh(unit * 0.9) + torch.logical_xor(x > 0, y > 0)
        )  # fmt: skip

    before = len(dvm.torch.reports())
    check(trigonometry, (cube(5), cube(5, seed=1)), (cube(7), cube(7, seed=1)))
    assert [r["fallbacks"] for r in dvm.torch.reports()[before:]] == [{}]


def test_a_cast_with_a_memory_format_runs_on_dvm_with_eagers_strides() -> None:
    def cast(x: Any) -> Any:
        double = x.to(torch.float64, non_blocking=True, memory_format=torch.preserve_format)
        return double * 2, x.to(memory_format=torch.channels_last) + 1

    x = torch.randn(2, 3, 4, 5)
    before = len(dvm.torch.reports())
    run = compiled(cast)
    for got, expected in zip(run(x), cast(x), strict=True):
        torch.testing.assert_close(got, expected)
        assert got.stride() == expected.stride()
    assert [r["fallbacks"] for r in dvm.torch.reports()[before:]] == [{}]


def test_an_output_with_gaps_between_its_elements_has_eagers_strides() -> None:
    """`empty_strided` and `new_empty_strided` at strides that leave gaps give them to
    the output written into them, as eager (the traced strides, when they are numbers);
    overlapping ones (a 0 stride) are no layout a copy can take: a dense output."""

    def written(x: Any) -> Any:
        spaced = torch.empty_strided((4, 3), (6, 2)).copy_(x)
        return spaced, x.new_empty_strided((2, 3, 2), (12, 1, 5)).copy_(x.reshape(2, 3, 2))

    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(2))
    torch._dynamo.reset()
    for got, expected in zip(torch.compile(written, backend="dvm")(x), written(x), strict=True):
        assert torch.equal(got, expected) and got.stride() == expected.stride()


def test_index_select_and_gather_of_a_0d_tensor_run_on_dvm() -> None:
    """torch takes its one element by ids that must be 0 (a 0-d result for
    index_select, the index's shape for gather)."""
    before = len(dvm.torch.reports())
    check(lambda x, ids: torch.index_select(x, 0, ids) * 2, (torch.tensor(3.0), torch.tensor([0])))
    check(lambda x, ids: torch.gather(x, 0, ids) * 2, (torch.tensor(3.0), torch.tensor(0)))
    check(lambda x, ids: torch.gather(x, 0, ids) * 2, (torch.tensor(3.0), torch.tensor([0, 0])))
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[before:])
    with pytest.raises(IndexError):
        compiled(lambda x, ids: torch.gather(x, 0, ids + 1))(torch.tensor(3.0), torch.tensor([0]))


def test_the_zero_tensor_of_the_backward_of_sgn_is_read_as_zeros() -> None:
    """`sgn`'s derivative of a real input is torch's zero tensor (no memory, which
    `Tensor.numpy` refuses): the backward graph's op making it runs in torch. In
    bfloat16 too, which crosses as int16 bits."""
    for size, dtype in [(4, torch.float32), (7, torch.float32), (5, torch.bfloat16)]:
        x = torch.randn(size, 3, generator=torch.Generator().manual_seed(size)).to(dtype)
        x.requires_grad_(True)
        compiled(lambda x: torch.sgn(x))(x).sum().backward()
        assert x.grad is not None
        torch.testing.assert_close(x.grad, torch.zeros_like(x), rtol=0, atol=0)


# Linear algebra that checks its result (`linalg.inv`, `solve`, `cholesky`): the check
# is an effectful op in a `with_effects` wrapper, which runs in torch on its tensors.


def spd(size: int, seed: int = 0) -> Any:
    a = torch.randn(size, size, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    return a @ a.T + torch.eye(size, dtype=torch.float64)


def test_an_inverse_and_a_solve_that_check_for_singular_inputs_run_in_torch() -> None:
    check(torch.linalg.inv, (spd(5),), (spd(7, seed=1),))
    check(torch.linalg.solve, (spd(5), spd(5)[:, 0]), (spd(7, seed=1), spd(7)[:, 0]))
    check(torch.linalg.cholesky, (spd(5),), (spd(7, seed=1),))


# Half-precision floats: ops torch leaves whole compute in float32 and round once.


def bf16(*shape: int, seed: int = 0) -> Any:
    values = torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * 4
    return values.bfloat16()


def test_a_float16_linear_adds_its_bias_before_it_rounds() -> None:
    def linear(x: Any, weight: Any, bias: Any) -> Any:
        return torch.nn.functional.linear(x, weight, bias), torch.addmm(bias, x, weight.T, alpha=2)

    def f16(*shape: int, seed: int = 0) -> Any:
        return bf16(*shape, seed=seed).half()

    check(linear, (f16(6, 32), f16(16, 32, seed=1), f16(16, seed=2)))


def test_addmm_addmv_and_addbmm_scale_as_torch_does() -> None:
    """A `beta` of 0 ignores the bias, NaN included; integers scale by `int(alpha)`."""

    def products(bias: Any, a: Any, b: Any, batches: Any) -> Any:
        return (
            torch.addmm(bias, a, b, beta=0, alpha=2),
            torch.addmv(bias[:, 0], a, b[:, 0], beta=0.6, alpha=1.5),
            torch.addbmm(bias, batches, b.expand(2, -1, -1), beta=0.5, alpha=3),
        )

    def calls(dtype: Any, rows: int) -> tuple[Any, ...]:
        g = torch.Generator().manual_seed(rows)
        a, b, batches = (
            torch.randn(*s, generator=g) * 4 for s in ((rows, 5), (5, 3), (2, rows, 5))
        )
        bias = (
            torch.full((rows, 3), float("nan")) if dtype.is_floating_point else torch.ones(rows, 3)
        )
        return tuple(t.to(dtype) for t in (bias, a, b, batches))

    before = len(dvm.torch.reports())
    check(products, calls(torch.float32, 4), calls(torch.float32, 6))
    check(products, calls(torch.int32, 4), calls(torch.int32, 6))
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[before:])


def test_a_bf16_vector_norm_is_rounded_once_not_at_each_square() -> None:
    def cosine(a: Any, b: Any) -> Any:
        return torch.nn.functional.cosine_similarity(a, b, dim=1)

    check(cosine, (bf16(64, 16), bf16(64, 16, seed=1)))


def test_bf16_gelu_batch_norm_and_average_pooling_compute_in_float32() -> None:
    x = bf16(2, 3, 9, 9)
    weight, mean, variance = bf16(3, seed=1), bf16(3, seed=2), bf16(3, seed=3).abs() + 1

    def layers(x: Any) -> Any:
        normed = torch.nn.functional.batch_norm(x, mean, variance, weight, weight, False, 0.5)
        pooled = torch.nn.functional.avg_pool2d(x, 3, 1, 1, True, False, 2)
        return torch.nn.functional.gelu(x), normed, pooled

    check(layers, (x,))


def test_bf16_transposed_convolutions_bags_and_bilinear_add_in_float32() -> None:
    def transposed(x: Any, weight: Any) -> Any:
        return torch.nn.functional.conv_transpose2d(x, weight, stride=(3, 2), padding=(1, 2))

    # (eager's own kernel rounds on the way: the float32 result rounded once is right)
    x, weight = bf16(2, 8, 6, 6), bf16(8, 4, 4, 5, seed=1)
    once = transposed(x.float(), weight.float()).bfloat16()
    assert torch.equal(compiled(transposed)(x, weight), once)
    bilinear = torch.nn.functional.bilinear
    a, b, weight = bf16(8, 16), bf16(8, 16, seed=1), bf16(4, 16, 16, seed=2)
    once = bilinear(a.float(), b.float(), weight.float()).bfloat16()
    assert torch.equal(compiled(bilinear)(a, b, weight), once)
    ids, offsets = torch.arange(40) % 5, torch.tensor([0, 20])
    check(lambda w: torch.nn.functional.embedding_bag(ids, w, offsets), (bf16(5, 64),))
    check(lambda w: torch.nn.functional.embedding_bag(ids, w, offsets, mode="mean"), (bf16(5, 64),))


def test_reductions_of_a_0d_tensor_along_dim_0_run_on_dvm() -> None:
    def reductions(x: Any) -> Any:
        return x.sum(0), x.mean(-1, keepdim=True), torch.amax(x, 0), x.prod(0)

    before = len(dvm.torch.reports())
    check(reductions, (torch.tensor(2.5),), (torch.tensor(-1.0),))
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[before:])


def test_reductions_with_a_dtype_cast_their_input_first_on_dvm() -> None:
    def reductions(x: Any) -> Any:
        return (
            x.sum(0, dtype=torch.float64),
            x.mean(1, dtype=torch.float64),
            x.sum(dtype=torch.int32),
        )

    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(0)) * 10
    before = len(dvm.torch.reports())
    check(reductions, (x,), (x[:3],))
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[before:])


def int8(*values: int) -> Any:
    return torch.tensor(values if len(values) != 1 else values[0], dtype=torch.int8)


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
def test_scans_argmax_repeat_and_index_reduce_of_a_0d_tensor_run_on_dvm() -> None:
    """A 0-d tensor's scan is itself (numpy's is 1-d), its argmax along 0 or -1 is 0,
    its repeat by no counts a copy, and torch's index_reduce reads it as one element."""

    def scans(x: Any) -> Any:
        return torch.cumsum(x, 0), torch.cumprod(x, -1), torch.cumsum(x, 0, dtype=torch.float64)

    def others(x: Any, source: Any) -> Any:
        reduced = x.index_reduce(0, torch.tensor([0]), source, "mean", include_self=False)
        return x.repeat(()), torch.argmax(x, 0, keepdim=True), torch.argmin(x, -1), reduced

    before = len(dvm.torch.reports())
    check(scans, (int8(7),), (int8(-3),))
    check(others, (int8(5), int8(-3)), (int8(-2), int8(9)))
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[before:])


def test_float_functions_of_integers_and_a_padding_by_an_int_of_the_call_run_on_dvm() -> None:
    """`rsqrt`, `sigmoid` and `erf` of integers are float32, as torch's; `F.pad`'s value
    may be an int argument, which `dynamic=True` makes a size of the call."""
    before = len(dvm.torch.reports())
    check(
        lambda x: (torch.rsqrt(x), torch.sigmoid(x), torch.erf(x)),
        (torch.arange(-3, 5, dtype=torch.int8),),
        (torch.arange(0, 9, dtype=torch.int32),),
    )
    check(
        lambda x, value: torch.nn.functional.pad(x, (1, 2), value=value),
        (torch.ones(1, 3, dtype=torch.int8), 3),
        (torch.ones(2, 5, dtype=torch.int8), 4),
    )
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[before:])


def test_floor_ceil_trunc_and_round_of_integers_are_copies_on_dvm() -> None:
    """torch's keep the dtype (numpy's would be floats); with decimals, or of bools,
    torch raises."""

    def rounded(x: Any) -> Any:
        return torch.floor(x), torch.ceil(x), torch.trunc(x), torch.round(x)

    before = len(dvm.torch.reports())
    check(rounded, (torch.arange(-5, 6, dtype=torch.int8),), (torch.arange(9).reshape(3, 3),))
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[before:])
    with pytest.raises(NotImplementedError):
        compiled(lambda x: torch.round(x, decimals=2))(torch.arange(4))
    with pytest.raises(NotImplementedError):
        compiled(torch.floor)(torch.tensor([True, False]))


def test_vector_norms_of_order_0_of_a_0d_tensor_and_with_a_dtype_run_on_dvm() -> None:
    """Order 0 counts the nonzero elements; a 0-d tensor's norm is its magnitude;
    `renorm` takes norms with a dtype (torch casts first). With their gradients."""

    def norms(x: Any, scalar: Any) -> Any:
        return (
            torch.linalg.vector_norm(scalar, 6),
            torch.norm(x, 0),
            torch.linalg.vector_norm(x, 0, dim=1),
            torch.renorm(x, 2, 1, 0.5),
            torch.linalg.vector_norm(x, 2, dim=1, dtype=torch.float64),
        )

    def gradients(fn: Callable[..., Any], x: Any, scalar: Any) -> Any:
        leaves = [x.clone().requires_grad_(), scalar.clone().requires_grad_()]
        results = [r for r in fn(*leaves) if r.requires_grad]
        return torch.autograd.grad(sum(r.float().sum() for r in results), leaves)

    run = compiled(norms)
    before = len(dvm.torch.reports())
    for n in (5, 7):
        x = cube(n, seed=n).bfloat16()
        x[0, 0, 0] = 0
        scalar = torch.tensor(-1.5, dtype=torch.bfloat16)
        torch.testing.assert_close(run(x, scalar), norms(x, scalar))
        torch.testing.assert_close(gradients(run, x, scalar), gradients(norms, x, scalar))
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[before:])


def test_a_cast_of_a_real_tensor_to_a_complex_dtype_runs_on_dvm() -> None:
    """Its real part, beside an imaginary part of 0 (`x.cfloat()`, an FFT's input)."""

    def cast(x: Any) -> Any:
        return x.to(torch.complex64), x.cdouble() * 2j, torch.view_as_real(x.cfloat() + 1)

    before = len(dvm.torch.reports())
    check(cast, (torch.arange(-3, 5, dtype=torch.int8),), (torch.arange(7, dtype=torch.int8),))
    check(cast, (cube(3)[0],), (torch.tensor([True, False]),))
    assert not any(r["fallbacks"] for r in dvm.torch.reports()[before:])

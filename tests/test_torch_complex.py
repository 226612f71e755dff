"""Complex tensors in the torch backend: recorded as float pairs (`aten_complex`), each
op against eager, with broadcasting, at the graph's boundaries (a complex input, a
complex output, an op that runs in torch) and over new sizes (plans replayed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from test_torch_modules_zoo import assert_share, graphs_of  # noqa: E402

from dvm.torch.convert import from_pairs, to_pairs  # noqa: E402


def complex_of(*shape: int, dtype: Any = torch.complex64) -> Any:
    return torch.randn(*shape, dtype=dtype)


def pairs_of(*shape: int) -> Any:
    return torch.randn(*shape, 2)


def rotate(x: Any, angle: Any) -> Any:
    """Meta's rotary in small: float pairs turned by a broadcast complex product."""
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
    turn = torch.polar(torch.ones_like(angle), angle)
    return torch.view_as_real(z * turn).flatten(-2)


def reshaped(p: Any) -> Any:
    """Slices, a reshape, `cat`, a transpose, an expand and reductions of complex values."""
    z = torch.view_as_complex(p)
    joined = torch.cat([z[1:].unsqueeze(0), z[:-1].reshape(1, -1, 6)], dim=-1)
    return torch.view_as_real(joined.transpose(1, 2).expand(2, 12, -1).sum(0) + z[0, :2].mean())


OPS: dict[str, tuple[Callable[..., Any], Callable[[int], tuple[Any, ...]]]] = {
    "rotate_broadcast": (rotate, lambda n: (torch.randn(2, n, 8), torch.randn(n, 4))),
    "complex_real_imag_abs": (
        lambda a, b: (lambda z: (z.real * 2, z.imag + 1, z.abs()))(torch.complex(a, b)),
        lambda n: (torch.randn(n, 3), torch.randn(n, 3)),
    ),
    "times_a_real_tensor_and_numbers": (
        lambda p, r: torch.view_as_real(torch.view_as_complex(p) * r * 0.5 * 2j),
        lambda n: (pairs_of(n, 3), torch.randn(3)),
    ),
    "plus_minus_real_and_complex": (
        lambda p, q, r: torch.view_as_real(
            (torch.view_as_complex(p) + r) - torch.view_as_complex(q) * 3 + (1 - 2j) - r * 2
        ),
        lambda n: (pairs_of(n, 1, 4), pairs_of(6, 4), torch.randn(n, 6, 1)),
    ),
    "divide": (
        lambda p, q, r: torch.view_as_real(
            torch.view_as_complex(p) / torch.view_as_complex(q) / r / 4.0
        ),
        lambda n: (pairs_of(n, 4), pairs_of(4) + 3, torch.rand(n, 1) + 1),
    ),
    "conj_and_its_product": (
        lambda p: (
            lambda z: torch.view_as_real(z * z.conj()) + torch.view_as_real(z.conj().resolve_conj())
        )(torch.view_as_complex(p)),
        lambda n: (pairs_of(n, 3),),
    ),
    "shapes": (reshaped, lambda n: (pairs_of(n, 6),)),
}
"""Per case: a function of complex values (real inputs and outputs) and its inputs at
size n."""


def compiled_over_sizes(f: Callable[..., Any], data: Callable[[int], tuple[Any, ...]]) -> Any:
    compiled = torch.compile(f, backend="dvm", dynamic=True)

    def run() -> None:
        for k, n in enumerate((5, 7, 11, 13)):
            torch.manual_seed(k)
            inputs = data(n)
            torch.testing.assert_close(compiled(*inputs), f(*inputs), rtol=1e-5, atol=1e-5)

    return graphs_of(run)


@pytest.mark.parametrize("name", OPS)
def test_a_complex_op_records_on_float_pairs_as_eager_computes_it(name: str) -> None:
    reports = compiled_over_sizes(*OPS[name])
    assert_share(reports, 1.0)
    assert all(r["plans"] == 1 and r["replayed"] == 3 for r in reports), reports


def inputs_of(n: int, dtype: Any) -> tuple[Any, ...]:
    """Complex inputs of `dtype` (one broadcast) and a real one of its parts' dtype."""
    real = torch.randn(n, 3).to(dtype.to_real())
    return complex_of(n, 3, dtype=dtype), complex_of(3, dtype=dtype), real


def test_a_complex_input_and_output_cross_without_a_copy_where_torch_allows() -> None:
    """A complex input reaches the program as its float pairs, over its memory; a
    complex result comes back as a complex tensor (complex64 and complex128)."""
    z = complex_of(4, 3)
    pairs = to_pairs(z)
    assert pairs.ctypes.data == z.data_ptr() and pairs.shape == (4, 3, 2)
    back = from_pairs(pairs)
    assert back.dtype == torch.complex64 and back.data_ptr() == z.data_ptr()
    assert to_pairs(z.conj()).tolist() == to_pairs(z.conj().resolve_conj()).tolist()

    def f(z: Any, w: Any, x: Any) -> Any:
        return z * w + x, (z.conj() * x).sum(0), z.real

    for dtype in (torch.complex64, torch.complex128):
        reports = compiled_over_sizes(f, lambda n, d=dtype: inputs_of(n, d))
        assert_share(reports, 1.0)
        assert all(r["plans"] == 1 and r["replayed"] == 3 for r in reports), reports


def test_an_op_that_runs_in_torch_takes_and_gives_complex_values() -> None:
    """`exp` of a complex tensor has no handler: the pairs before it become a complex
    tensor, its result pairs again, and the rest records."""

    def f(p: Any) -> Any:
        z = torch.view_as_complex(p) * 2
        return torch.view_as_real(torch.exp(z) * z)

    (report,) = compiled_over_sizes(f, lambda n: (pairs_of(n, 3),))
    assert report["fallbacks"] == {"exp": 1}, report
    assert report["ops_on_dvm"] == report["ops_total"] - 1
    assert (report["plans"], report["replayed"]) == (1, 3), report


def test_a_complex_product_gives_eagers_gradients() -> None:
    """The backward of `view_as_complex`, a product and `view_as_real` (`_conj`, a
    complex product, the pairs of a complex gradient) records too."""

    def run() -> None:
        compiled = torch.compile(rotate, backend="dvm", dynamic=True)
        for k, n in enumerate((3, 5, 7)):
            torch.manual_seed(k)
            x, angle = torch.randn(2, n, 8), torch.randn(n, 4)
            mine = [x.clone().requires_grad_(), angle.clone().requires_grad_()]
            given = [x.clone().requires_grad_(), angle.clone().requires_grad_()]
            compiled(*mine).square().sum().backward()
            rotate(*given).square().sum().backward()
            for a, b in zip(mine, given, strict=True):
                torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)

    reports = graphs_of(run)
    assert any("backward" in r["graph"] for r in reports), reports
    assert_share(reports, 1.0)
    assert all(r["replayed"] == 2 for r in reports), reports


def magnitude_and_turn(z: Any, w: Any) -> Any:
    return (z * w).abs().sum() + torch.view_as_real(z * 2j).sum()


def test_a_complex_input_that_requires_grad_gets_eagers_gradient() -> None:
    """The gradient of a complex input (`abs`'s backward: a quotient, a `where` with a
    complex zero, the conjugate of a number), and an input with its conjugate bit."""

    def run() -> None:
        compiled = torch.compile(magnitude_and_turn, backend="dvm", dynamic=True)
        for k, n in enumerate((5, 7, 9)):
            torch.manual_seed(k)
            z, w = complex_of(n, 3), complex_of(3)
            mine, given = z.clone().requires_grad_(), z.clone().requires_grad_()
            compiled(mine, w).backward()
            magnitude_and_turn(given, w).backward()
            torch.testing.assert_close(mine.grad, given.grad)
            expected = magnitude_and_turn(z.conj(), w)
            torch.testing.assert_close(compiled(z.conj(), w), expected)

    reports = graphs_of(run)
    assert any("backward" in r["graph"] for r in reports), reports
    assert_share(reports, 1.0)


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_complex32_runs_in_torch_with_the_reason() -> None:
    def f(p: Any) -> Any:
        return torch.view_as_real(torch.view_as_complex(p) * 2)

    compiled = torch.compile(f, backend="dvm", dynamic=True)

    def run() -> None:
        for n in (3, 5):
            p = torch.randn(n, 2).half()
            torch.testing.assert_close(compiled(p), f(p))

    (report,) = graphs_of(run)
    assert "view_as_complex" in report["fallbacks"], report
    assert "complex32" in report["reasons"]["view_as_complex"], report


def test_abs_neither_overflows_nor_underflows_as_eager() -> None:
    """|z| scaled by its larger part (as `hypot`): finite for parts near 1e20 in float32
    (whose squares overflow), nonzero for parts near 1e-30 (whose squares underflow),
    0 at 0, inf where a part is inf even beside a NaN, NaN otherwise; and its gradient."""
    big, tiny, inf, nan = 1e20, 1e-30, float("inf"), float("nan")
    real = torch.tensor([big, -3.0, 0.0, inf, nan, tiny, -big, 2.0])
    imag = torch.tensor([big, 4.0, 0.0, nan, 2.0, tiny, 1.0, -inf])

    def magnitude(a: Any, b: Any) -> Any:
        return torch.complex(a, b).abs() * 1

    compiled = torch.compile(magnitude, backend="dvm", dynamic=True)

    def run() -> None:
        for n in (5, 8):
            got, expected = compiled(real[:n], imag[:n]), magnitude(real[:n], imag[:n])
            torch.testing.assert_close(got, expected, equal_nan=True)
        a, b = (torch.randn(6, requires_grad=True) for _ in range(2))
        given = [x.detach().clone().requires_grad_() for x in (a, b)]
        compiled(a, b).sum().backward()
        magnitude(*given).sum().backward()
        torch.testing.assert_close((a.grad, b.grad), tuple(x.grad for x in given))

    assert_share(graphs_of(run), 1.0)

"""Complex tensors as float pairs: the ATen ops of complex values, recorded on the
pairs (`convert.Complex`: the tensor's shape and a trailing dim of 2, real then
imaginary, as `torch.view_as_real` lays it out), since the dialect has no complex
type. `view_as_complex` and `view_as_real` are the pairs themselves; products and
quotients are written out on the parts; the shape ops are the real ones with the
pair dim kept last. An op of a complex operand without a handler here runs in torch
(the pairs convert at that boundary, as at the graph's inputs and outputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dvm.lazy import LazyArray, asarray
from dvm.torch import aten
from dvm.torch.aten import Handler, Unsupported, lazy, needs
from dvm.torch.convert import COMPLEX_PARTS, DTYPES, Complex
from dvm.torch.sizes import specialized


def pairs_of(z: Any) -> LazyArray:
    if not isinstance(z, Complex):
        raise Unsupported(aten.kept_in_torch(z) or "a real operand where a complex one goes")
    return lazy(z.pairs)


def axis(dim: Any, ndim: int) -> int:
    """A dim of a complex tensor of `ndim` dims as an axis of its pairs (the same, from
    the front: the pair dim is last)."""
    return specialized(dim) % max(ndim, 1)


def parts(z: Complex) -> tuple[LazyArray, LazyArray]:
    pairs = pairs_of(z)
    return aten.select(pairs, -1, 0), aten.select(pairs, -1, 1)


def joined(real: LazyArray, imag: LazyArray) -> Complex:
    """The complex tensor of these parts (of one shape)."""
    real, imag = lazy(real), lazy(imag)
    if real.dtype != imag.dtype or real.ndim != imag.ndim:
        raise Unsupported("complex parts of other dtypes or ranks")
    if tuple(real.shape) != tuple(imag.shape):  # (a guard: the shapes the call has)
        raise Unsupported("complex parts of other shapes")
    return Complex(needs(np.stack([real, imag], axis=real.ndim)))


def as_complex(x: Any) -> Complex | complex:
    """An operand of a complex op: a complex tensor, a real tensor as one whose
    imaginary part is 0 (pairs `(x, 0)`), a Python number as a complex number."""
    if isinstance(x, Complex):
        return x
    if isinstance(x, LazyArray):
        if x.dtype.kind != "f":
            raise Unsupported("a complex op with a tensor of integers")
        real_first = asarray(np.array([True, False]))
        return Complex(needs(np.where(real_first, aten.unsqueeze(x, -1), np.asarray(0, x.dtype))))
    if isinstance(x, bool | int | float | complex):
        return complex(x)
    raise Unsupported(aten.kept_in_torch(x) or f"a complex op of {type(x).__name__}")


def number_pair(value: complex, dtype: np.dtype[Any]) -> LazyArray:
    """A complex number as a constant pair (of `dtype`)."""
    return asarray(np.array([value.real, value.imag], dtype))


def where(condition: Any, a: Any, b: Any) -> Complex:
    """`where` of complex values (a number, or a real tensor, as a complex one)."""
    tensors = [pairs_of(x) for x in map(as_complex, (a, b)) if isinstance(x, Complex)]
    if not tensors:
        raise Unsupported("a where of two numbers")
    chosen = [
        x.pairs if isinstance(x, Complex) else number_pair(x, tensors[0].dtype)
        for x in map(as_complex, (a, b))
    ]
    return Complex(needs(np.where(aten.unsqueeze(lazy(condition), -1), *chosen)))


def scalar_tensor(value: Any, dtype: Any = None, **kwargs: Any) -> Complex:
    if dtype not in COMPLEX_PARTS or isinstance(value, LazyArray):
        raise Unsupported(f"a scalar tensor of {dtype}")
    return Complex(number_pair(complex(value), DTYPES[COMPLEX_PARTS[dtype]]))


# -- between real and complex -----------------------------------------------------------


def view_as_complex(x: Any) -> Complex:
    x = lazy(x)
    if x.dtype.kind != "f" or not x.ndim or x.shape[-1] != 2:
        raise Unsupported("view_as_complex of other than float pairs")
    return Complex(x)


def polar(magnitude: Any, angle: Any) -> Complex:
    magnitude, angle = lazy(magnitude), lazy(angle)
    return joined(needs(magnitude * np.cos(angle)), needs(magnitude * np.sin(angle)))


def absolute(z: Any) -> LazyArray:
    """|z| as `hypot` computes it: the larger part times sqrt(1 + (smaller / larger)^2),
    whose square cannot overflow (sqrt(re^2 + im^2) is inf for |re| ~ 1e20 in float32,
    where torch's is finite); 0 for 0, and inf where either part is (even beside a NaN)."""
    real, imag = parts(z)
    a, b = needs(np.abs(real)), needs(np.abs(imag))
    larger, smaller = needs(np.maximum(a, b)), needs(np.minimum(a, b))
    ratio = needs(smaller / np.where(larger == 0, 1, larger))
    scaled = needs(larger * np.sqrt(1 + ratio * ratio))
    return needs(np.where(needs(np.isinf(a) | np.isinf(b)), np.inf, scaled))


def conj(z: Any) -> Complex:
    if isinstance(z, complex):  # (a number of the graph: a constant pair)
        return Complex(number_pair(z.conjugate(), np.dtype(np.float64)))  # (`as_declared` casts)
    real, imag = parts(z)
    return joined(real, needs(-imag))


# -- arithmetic ----------------------------------------------------------------------------


def real_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def multiply(a: Any, b: Any) -> Complex:
    """`a * b`, one of them complex: by a real tensor or a real number (a size too:
    `aten.number`) both parts scale; by a complex tensor or number, `(ac - bd, ad +
    bc)` on the parts."""
    a, b = aten.operand(a), aten.operand(b)  # (a tensor left in torch: Unsupported, why)
    if not isinstance(a, Complex):
        a, b = b, a
    if isinstance(a, LazyArray):  # (a real tensor times a complex number)
        a = as_complex(a)
    pairs = pairs_of(a)
    if isinstance(b, LazyArray) and b.dtype.kind == "f":
        return Complex(needs(pairs * aten.unsqueeze(b, -1)))
    if real_number(b):
        return Complex(needs(pairs * aten.number(b, pairs)))
    xr, xi = parts(pairs_complex(a))
    if isinstance(b, complex):
        return joined(needs(xr * b.real - xi * b.imag), needs(xr * b.imag + xi * b.real))
    yr, yi = parts(pairs_complex(b))
    return joined(needs(xr * yr - xi * yi), needs(xr * yi + xi * yr))


def divide(a: Any, b: Any) -> Complex:
    """`a / b`: by a real tensor or number, each part divided; by a complex tensor,
    `a * conj(b) / |b|^2`."""
    if isinstance(b, LazyArray) and b.dtype.kind == "f":
        return Complex(needs(pairs_of(as_complex(a)) / aten.unsqueeze(b, -1)))
    if real_number(b):
        pairs = pairs_of(as_complex(a))
        return Complex(needs(pairs / aten.number(b, pairs)))
    if isinstance(b, complex):
        return multiply(a, 1 / b)
    br, bi = parts(pairs_complex(b))
    product = multiply(a, conj(b))
    return Complex(needs(pairs_of(product) / aten.unsqueeze(needs(br * br + bi * bi), -1)))


def pairs_complex(z: Any) -> Complex:
    if not isinstance(z, Complex):
        raise Unsupported("a complex op of no complex tensor")
    return z


def add_or_subtract(sign: int) -> Handler:
    """`a + alpha * b` (`sign` -1: minus): on the pairs, a real operand as `(x, 0)`."""

    def handler(a: Any, b: Any, alpha: Any = 1) -> Complex:
        if alpha != 1:
            b = multiply(b, alpha) if isinstance(b, Complex) else b * alpha
        x, y = as_complex(a), as_complex(b)
        if isinstance(y, complex):
            x, y = y, x
            sign_of_x, sign_of_y = sign, 1
        else:
            sign_of_x, sign_of_y = 1, sign
        if isinstance(x, complex):  # (a number: a constant pair, broadcast)
            pair = asarray(np.array([x.real, x.imag]) * sign_of_x, pairs_of(y).dtype)
            return Complex(needs(pair + pairs_of(y) * sign_of_y))
        combine = np.add if sign == 1 else np.subtract
        return Complex(needs(combine(pairs_of(x), pairs_of(y))))

    return handler


# -- shapes (the pair dim stays last) -------------------------------------------------------


def view(z: Any, sizes: Sequence[Any]) -> Complex:
    return Complex(aten.view(pairs_of(z), [*sizes, 2]))


def unsqueeze(z: Any, dim: Any) -> Complex:
    return Complex(aten.unsqueeze(pairs_of(z), axis(dim, z.ndim + 1)))


def squeeze(z: Any, dims: Any = None) -> Complex:
    pairs = pairs_of(z)
    if dims is None:
        dims = [a for a in range(z.ndim) if pairs.shape[a] == 1]
    chosen = dims if isinstance(dims, Sequence) else [dims]
    return Complex(aten.squeeze(pairs, [axis(d, z.ndim) for d in chosen]))


def slice_(z: Any, dim: Any = 0, start: Any = None, end: Any = None, step: Any = 1) -> Complex:
    return Complex(aten.slice_(pairs_of(z), axis(dim, z.ndim), start, end, step))


def select(z: Any, dim: Any, index: Any) -> Complex:
    return Complex(aten.select(pairs_of(z), axis(dim, z.ndim), index))


def expand(z: Any, sizes: Sequence[Any], implicit: bool = False) -> Complex:
    return Complex(aten.expand(pairs_of(z), [*sizes, 2]))


def permute(z: Any, order: Sequence[Any]) -> Complex:
    return Complex(aten.permute(pairs_of(z), [*(axis(d, z.ndim) for d in order), z.ndim]))


def transpose(z: Any, a: Any = 0, b: Any = 1) -> Complex:
    return Complex(aten.transpose(pairs_of(z), axis(a, z.ndim), axis(b, z.ndim)))


def cat(tensors: Sequence[Any], dim: Any = 0) -> Complex:
    given = [pairs_complex(as_complex(t)) for t in tensors]
    return Complex(aten.cat([pairs_of(z) for z in given], axis(dim, given[0].ndim)))


def split_with_sizes(z: Any, sizes: Sequence[Any], dim: Any = 0) -> list[Complex]:
    pieces = aten.split_with_sizes(pairs_of(z), sizes, axis(dim, z.ndim))
    return [Complex(p) for p in pieces]


def reduction(function: Handler) -> Handler:
    """`sum`, `mean` over complex dims (each part alone)."""

    def handler(z: Any, dims: Any = None, keepdim: bool = False, dtype: Any = None) -> Complex:
        if dtype is not None:
            raise Unsupported("a complex reduction with a dtype")
        if dims is None or dims == []:
            dims = list(range(z.ndim))
        chosen = dims if isinstance(dims, Sequence) else [dims]
        return Complex(function(pairs_of(z), [axis(d, z.ndim) for d in chosen], keepdim))

    return handler


def copy_of(z: Any, *args: Any, **kwargs: Any) -> Complex:
    return Complex(pairs_of(z).copy())


def to_copy(z: Any, dtype: Any = None, **kwargs: Any) -> Complex:
    """A copy, or a cast between complex64 and complex128 (of each part); a real
    tensor cast to a complex dtype is its real part, beside an imaginary part of 0."""
    if dtype is not None and dtype not in COMPLEX_PARTS:
        raise Unsupported(f"a cast of a complex tensor to {dtype}")
    if not isinstance(z, Complex) and dtype is not None:
        real = aten.to_copy(z, COMPLEX_PARTS[dtype], **kwargs)
        return joined(real, needs(np.zeros_like(real)))
    pairs = pairs_of(z)
    if dtype is None:
        return Complex(pairs.copy())
    return Complex(aten.to_copy(pairs, COMPLEX_PARTS[dtype], **kwargs))


def same(z: Any, *args: Any, **kwargs: Any) -> Complex:
    return pairs_complex(z)


HANDLERS: dict[str, Handler] = {
    "view_as_complex": view_as_complex, "polar": polar,
    "complex": lambda real, imag: joined(lazy(real), lazy(imag)),
}  # fmt: skip
"""The ops that make a complex tensor of real ones (`graph` adds them to the real
ops' handlers)."""

OF_COMPLEX: dict[str, Handler] = HANDLERS | {
    "view_as_real": lambda z: pairs_of(z),
    "real": lambda z: parts(pairs_complex(z))[0], "imag": lambda z: parts(pairs_complex(z))[1],
    "abs": absolute, "conj": conj, "_conj": conj, "conj_physical": conj,
    "resolve_conj": same, "resolve_neg": same, "alias": same, "detach": same,
    "clone": copy_of, "lift_fresh_copy": copy_of, "_to_copy": to_copy,
    "mul": multiply, "div": divide, "true_divide": divide,
    "add": add_or_subtract(1), "sub": add_or_subtract(-1),
    "neg": lambda z: Complex(needs(-pairs_of(z))),
    "view": view, "_unsafe_view": view, "reshape": view, "unsqueeze": unsqueeze,
    "squeeze": squeeze, "slice": slice_, "select": select, "expand": expand,
    "permute": permute, "transpose": transpose, "t": lambda z: transpose(z, 0, -1),
    "cat": cat, "split_with_sizes": split_with_sizes, "where": where,
    "scalar_tensor": scalar_tensor,
    "sum": reduction(aten.reduction(np.sum)), "mean": reduction(aten.reduction(np.mean)),
}  # fmt: skip
"""The ops of complex operands (or results) that record, by name."""

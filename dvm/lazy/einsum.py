"""numpy's `einsum` of one or two operands, recorded as transposes, sums and a batched
`matmul`.

Each operand's labels fall in four groups: batch (in both operands and the output),
free (in one operand and the output), contracted (in both, not in the output) and
summed (in one operand only). An operand sums its summed labels away, is transposed
to (batch, free, contracted) and reshaped to three dims, so that the two meet as one
`matmul` of (B, M, K) by (B, K, N); the product is reshaped to the labels' sizes and
transposed to the output's order. Repeated labels in one operand (a diagonal, `ii`),
`...` and more than two operands run in numpy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dvm.lazy import numpy_api, record
from dvm.lazy.functions import View
from dvm.lazy.graph import Node

LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def einsum(subscripts: Any, *operands: Any, **kwargs: Any) -> Node | View | None:
    if kwargs.keys() - {"optimize"} or not isinstance(subscripts, str) or "." in subscripts:
        return None
    if not 1 <= len(operands) <= 2 or not all(isinstance(x, Node | np.ndarray) for x in operands):
        return None
    inputs, _, output = subscripts.replace(" ", "").partition("->")
    labels = inputs.split(",")
    if "->" not in subscripts:  # numpy's implicit output: labels seen once, sorted
        every = "".join(labels)
        output = "".join(sorted(c for c in set(every) if every.count(c) == 1))
    if len(labels) != len(operands) or not valid(labels, output, operands):
        return None
    dtype = np.result_type(*[x.dtype for x in operands])
    if dtype == np.bool_ or dtype.isbuiltin != 1:
        return None  # (numpy's einsum refuses a dtype of a library's own, bfloat16)
    nodes = [n for n in (numpy_api.as_node(x, dtype) for x in operands) if n is not None]
    if len(nodes) != len(operands):
        return None
    parts = [summed_away(n, k, labels, output) for k, n in enumerate(nodes)]
    if len(parts) == 1:
        node, kept = parts[0]
        if node is not operands[0] or not output:  # (a 0-d result: numpy's scalar)
            return arranged(node, kept, output)
        # nothing summed nor converted: numpy's result is a view of the operand
        return View(arranged(node, kept, output), node, lambda v: np.einsum(subscripts, v))
    return contracted(parts[0], parts[1], output)


def valid(labels: list[str], output: str, operands: tuple[Any, ...]) -> bool:
    """Letters only, no label twice in an operand or the output, each output label in
    an operand, and a label's sizes equal wherever it appears (no broadcasting)."""
    if not all(set(lab) <= LETTERS and len(set(lab)) == len(lab) for lab in [*labels, output]):
        return False
    if not set(output) <= set("".join(labels)):
        return False
    sizes: dict[str, int] = {}
    for lab, x in zip(labels, operands, strict=True):
        if len(lab) != x.ndim:
            return False
        for c, n in zip(lab, x.shape, strict=True):
            if sizes.setdefault(c, n) != n:
                return False
    return True


def summed_away(x: Node, k: int, every: list[str], output: str) -> tuple[Node, str]:
    """Operand `k`, `x`, summed over its labels that no other operand nor the output
    has, in its own dtype as numpy's einsum sums."""
    labels = every[k]
    others = "".join(lab for j, lab in enumerate(every) if j != k) + output
    axes = tuple(k for k, c in enumerate(labels) if c not in others)
    if not axes:
        return x, labels
    # (in the operands' dtype: einsum sums int32s in int32, where `np.sum` takes int64)
    return record.reduce("sum", x, axes, False, x.dtype), "".join(c for c in labels if c in others)


def arranged(x: Node, labels: str, order: str) -> Node:
    """`x` (dims named by `labels`) transposed to `order`."""
    perm = tuple(labels.index(c) for c in order)
    if perm == tuple(range(len(perm))):
        return record.convert(x, x.dtype)
    return record.transpose(x, perm)


def contracted(a: tuple[Node, str], b: tuple[Node, str], output: str) -> Node | None:
    (x, xl), (y, yl) = a, b
    batch = [c for c in output if c in xl and c in yl]
    free_x = [c for c in output if c in xl and c not in yl]
    free_y = [c for c in output if c in yl and c not in xl]
    inner = [c for c in xl if c in yl and c not in output]
    size = dict(zip(xl, x.shape, strict=True)) | dict(zip(yl, y.shape, strict=True))

    def count(group: list[str]) -> int:
        return math.prod(size[c] for c in group)

    left = record.reshape(
        arranged(x, xl, "".join(batch + free_x + inner)),
        (count(batch), count(free_x), count(inner)),
    )
    right = record.reshape(
        arranged(y, yl, "".join(batch + inner + free_y)),
        (count(batch), count(inner), count(free_y)),
    )
    if left is None or right is None:
        return None
    product = record.matmul(left, right)
    if product is None:
        return None
    done = "".join(batch + free_x + free_y)
    shaped = record.reshape(product, tuple(size[c] for c in done))
    return None if shaped is None else arranged(shaped, done, output)

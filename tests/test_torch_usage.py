"""How people call `torch.compile(..., backend="dvm")`, against eager: modules whose
state changes (batch norm statistics, buffers written in place, a KV cache), inputs
mutated in the forward, outputs that alias each other or an input, training loops
with optimizers, the compile modes (`dynamic`, `mark_dynamic`, `fullgraph`, graph
breaks, a decorator, nested compiled modules) and the inputs' layouts and dtypes."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from test_torch_modules_zoo import graphs_of  # noqa: E402

import dvm.torch  # noqa: E402  (after torch: the extra is optional)


def close(got: Any, expected: Any, tolerance: float = 1e-5) -> None:
    torch.testing.assert_close(got, expected, rtol=tolerance, atol=tolerance)


def assert_same_state(model: Any, reference: Any) -> None:
    """Parameters and buffers (running statistics, counters, caches) alike."""
    mine, theirs = model.state_dict(), reference.state_dict()
    assert mine.keys() == theirs.keys()
    for key in theirs:
        assert mine[key].dtype == theirs[key].dtype, key
        torch.testing.assert_close(mine[key], theirs[key], rtol=1e-4, atol=1e-5, msg=key)


def on_dvm(reports: list[dict[str, Any]]) -> None:
    """Every op of every graph recorded (nothing fell back to torch)."""
    for report in reports:
        assert report["ops_on_dvm"] == report["ops_total"], report


# -- state -------------------------------------------------------------------------------------


def test_batch_norm_in_training_moves_its_running_statistics_as_eager() -> None:
    """BatchNorm2d and BatchNorm1d in train mode over new batch sizes: outputs, the
    running mean and (unbiased) variance and `num_batches_tracked` as eager's; then eval
    uses them."""
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.LazyLinear(5)
    )
    model(torch.randn(2, 3, 6, 6))  # (the lazy linear takes its size)
    model.append(nn.BatchNorm1d(5))
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        for b in (4, 3, 6, 5):
            x = torch.randn(b, 3, 6, 6)
            close(compiled(x), reference(x), 1e-4)
        assert_same_state(model, reference)
        model.eval()
        reference.eval()
        with torch.no_grad():
            x = torch.randn(3, 3, 6, 6)
            close(compiled(x), reference(x), 1e-4)

    on_dvm(graphs_of(run))
    assert int(model[1].num_batches_tracked) == 5  # (the lazy linear's call, then 4)


class Accumulator(nn.Module):
    """A buffer moved in place by each call's inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x: Any) -> Any:
        self.total.add_(x.mean(0))
        return x * self.total


class KVCache(nn.Module):
    """Keys written into a preallocated cache at positions from sizes: a slice `copy_`
    and an `index_copy_`, both read back."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("keys", torch.zeros(2, 16, 4))
        self.register_buffer("values", torch.zeros(2, 16, 4))

    def forward(self, x: Any, past: Any) -> Any:
        start, t = past.shape[0], x.shape[1]
        self.keys[:, start : start + t].copy_(x)
        self.values.index_copy_(1, torch.arange(start, start + t), 2 * x)
        return self.keys[:, : start + t].sum(1) + self.values.sum(1)


@pytest.mark.parametrize("make", [Accumulator, KVCache])
def test_buffers_written_in_place_hold_eagers_values(make: Callable[[], Any]) -> None:
    """The buffers after each call as eager's, every op on dvm (the cache's
    `index_copy_` at an `arange` of positions included)."""
    model, reference = make(), make()
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        start = 0
        for t in (3, 2, 4, 5):
            torch.manual_seed(t)
            if make is Accumulator:
                inputs: tuple[Any, ...] = (torch.randn(t, 3),)
            else:
                inputs = (torch.randn(2, t, 4), torch.zeros(start))
            close(compiled(*inputs), reference(*inputs))
            assert_same_state(model, reference)
            start += t

    on_dvm(graphs_of(run))


def mutates(x: Any, y: Any) -> Any:
    x.add_(1)
    y[:, 0].mul_(2)
    return x * y.sum(1, keepdim=True)


def test_an_input_mutated_in_the_forward_is_the_callers_tensor_mutated() -> None:
    """`x.add_(1)` and a write through a view of a transposed input: the caller's
    tensors change as in eager, the output too."""
    compiled = torch.compile(mutates, backend="dvm", dynamic=True)
    for b in (3, 4, 6):
        torch.manual_seed(b)
        x, y = torch.randn(b, 2), torch.randn(3, b).t()
        x2, y2 = x.clone(), y.clone()
        close(compiled(x, y), mutates(x2, y2))
        close(x, x2)
        close(y, y2)


def aliasing(x: Any, w: Any) -> Any:
    y = x * w
    return x, x[1:], y, y, y.t(), y[::2], y[: x.shape[0] - 1], y.view(-1), y.t()[0]


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "requires_grad"])
def test_outputs_alias_each_other_and_the_inputs_as_in_eager(grad: bool) -> None:
    """An input returned, a view of it, one tensor returned twice, and views of an
    output (transposed, strided, sliced by a size): the same memory as eager's, so a
    write to the output shows in its views."""
    w = torch.randn(3, requires_grad=grad)
    compiled = torch.compile(aliasing, backend="dvm", dynamic=True)
    for b in (3, 4, 6):
        x = torch.randn(b, 3)
        got, expected = compiled(x, w), aliasing(x, w)
        for g, e in zip(got, expected, strict=True):
            close(g, e)
            assert g.stride() == e.stride() and g.requires_grad == e.requires_grad
        assert got[0] is x and got[1].data_ptr() == x[1:].data_ptr()
        assert got[2] is got[3]
        with torch.no_grad():
            got[2].add_(1)
        y = got[2]
        assert torch.equal(got[4], y.t()) and torch.equal(got[5], y[::2])
        assert torch.equal(got[6], y[: b - 1]) and torch.equal(got[7], y.view(-1))
        assert torch.equal(got[8], y.t()[0])


def view_of_a_strided_slice(x: Any) -> Any:
    return x[:, ::2].view_as(x[:, ::2])


def test_a_view_sized_by_a_slice_of_the_input_is_a_view_of_the_input() -> None:
    """The view's sizes are `sym_size`s of a slice of the input: the output is still
    that view of the input (eager's strides and elements), not the input's elements
    in the program's contiguous order."""
    compiled = torch.compile(view_of_a_strided_slice, backend="dvm", dynamic=True)
    for b in (3, 5):
        for x in (torch.randn(4, b), torch.randn(b, 4).t()):
            got, expected = compiled(x), view_of_a_strided_slice(x)
            assert torch.equal(got, expected) and got.stride() == expected.stride()
            assert got.data_ptr() == x.data_ptr()


def view_then_write(y: Any) -> Any:
    v = y.chunk(2, -1)[1]
    y.select(0, 1).add_(1)
    return v


def view_of_a_written_input(x: Any) -> Any:
    v = x.view_as(x)
    v[0].fill_(3)
    return v


@pytest.mark.parametrize("fn", [view_then_write, view_of_a_written_input])
def test_a_view_of_an_input_written_in_place_is_a_view_of_the_input(fn: Any) -> None:
    """The output is a view of the graph's new value of the input: it is made that view
    of the input itself, which AOTAutograd writes the new value into, as in eager (on a
    contiguous input and on one sliced with steps)."""
    compiled = torch.compile(fn, backend="dvm", dynamic=True)
    for b in (3, 5):
        base, base2 = torch.randn(2 * b, 12), torch.empty(2 * b, 12)
        base2.copy_(base)
        for y, y2 in ((base[:b, :4], base2[:b, :4]), (base[::2, 1::3], base2[::2, 1::3])):
            got, expected = compiled(y), fn(y2)
            assert torch.equal(got, expected) and torch.equal(base, base2)
            assert got.stride() == expected.stride()
            assert got.data_ptr() - y.data_ptr() == expected.data_ptr() - y2.data_ptr()


# -- training ----------------------------------------------------------------------------------


def mlp() -> Any:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 2))


@pytest.mark.parametrize("optimizer", [torch.optim.SGD, torch.optim.AdamW])
def test_training_steps_with_an_optimizer_move_the_weights_as_eager(optimizer: Any) -> None:
    """Several steps over new batch sizes (`optimizer.step()` outside the model), each
    accumulating the gradients of two batches, and the gradients of an input that
    requires grad."""
    model = mlp()
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    steps = [
        (compiled, optimizer(model.parameters(), lr=0.01)),
        (reference, optimizer(reference.parameters(), lr=0.01)),
    ]

    def run() -> None:
        for b in (4, 3, 6, 5):
            x = torch.randn(b, 4)
            grads = []
            for module, opt in steps:
                opt.zero_grad()
                given = x.clone().requires_grad_()
                module(given).square().mean().backward()
                module(given[1:]).abs().mean().backward()
                opt.step()
                grads.append(given.grad)
            close(*grads)
        assert_same_state(model, reference)

    reports = graphs_of(run)
    on_dvm(reports)
    assert any("backward" in r["graph"] for r in reports)


def test_a_second_backward_with_retain_graph() -> None:
    """`backward(retain_graph=True)` then `backward()`: the gradients twice eager's
    one. AOTAutograd refuses a retained graph whose backward was given donated buffers
    (saved tensors a backend may overwrite), for every backend; torch's setting turns
    them off."""
    model = mlp()
    reference = copy.deepcopy(model)
    with torch._functorch.config.patch(donated_buffer=False):
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        for b in (3, 5):
            x = torch.randn(b, 4)
            for module in (compiled, reference):
                loss = module(x).square().mean()
                loss.backward(retain_graph=True)
                loss.backward()
    assert_same_state(model, reference)
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        close(p.grad, q.grad)


def test_no_grad_and_inference_mode_around_compiled_calls() -> None:
    model = mlp()
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    for b in (3, 5):
        x = torch.randn(b, 4)
        with torch.no_grad():
            got = compiled(x)
            assert not got.requires_grad
            close(got, model(x))
        with torch.inference_mode():
            got = compiled(x)
            assert got.is_inference()
            close(got, model(x))
        assert compiled(x).requires_grad


@pytest.mark.filterwarnings(  # (dynamo tracing the optimizer meets torch's own)
    "ignore:`torch.jit.script_method` is deprecated:DeprecationWarning"
)
def test_a_compiled_train_step_with_the_optimizer_inside() -> None:
    """A function compiled whole: `zero_grad`, the forward, `backward` and `opt.step()`
    (dynamo breaks the graph at the backward): the weights as eager's."""
    model = mlp()
    reference = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    eager_opt = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)

    def step(module: Any, optimizer: Any, x: Any) -> Any:
        optimizer.zero_grad()
        loss = module(x).square().mean()
        loss.backward()
        optimizer.step()
        return loss

    compiled = torch.compile(step, backend="dvm", dynamic=True)
    for b in (3, 4, 5):
        x = torch.randn(b, 4)
        close(compiled(model, opt, x), step(reference, eager_opt, x))
    assert_same_state(model, reference)


# -- compile modes -----------------------------------------------------------------------------


def graphs_compiled(run: Callable[[], None]) -> int:
    return len(graphs_of(run))


def test_dynamic_modes_compile_one_general_graph() -> None:
    """`dynamic=None` (dynamo's default: a static graph, then a dynamic one after the
    first size change), `mark_dynamic` and `fullgraph=True`: eager's values, and no graph
    per size after that."""
    model = mlp()

    def stream(compiled: Any, mark: bool = False) -> Callable[[], None]:
        def run() -> None:
            for b in (3, 4, 5, 6, 7):
                x = torch.randn(b, 4)
                if mark:
                    torch._dynamo.mark_dynamic(x, 0)
                close(compiled(x), model(x))

        return run

    assert graphs_compiled(stream(torch.compile(model, backend="dvm"))) == 2
    assert graphs_compiled(stream(torch.compile(model, backend="dvm"), mark=True)) == 1
    full = torch.compile(model, backend="dvm", dynamic=True, fullgraph=True)
    assert graphs_compiled(stream(full)) == 1


class Branchy(nn.Module):
    """A `print` and a Python branch on `.item()` (two graph breaks), and a branch on
    a size (a guard)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x: Any, scale: float = 1.0) -> Any:
        y = self.linear(x) * scale
        print("batch", y.shape[0])
        y = y.relu() if y.sum().item() > 0 else -y
        return y.sum(0) if x.shape[0] > 4 else y.tanh()


def test_graph_breaks_and_data_dependent_branches_match_eager(capsys: Any) -> None:
    model = Branchy()
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    for b, scale in ((3, 0.5), (5, -1.5), (6, 2.0), (2, -0.25), (7, 1.0)):
        torch.manual_seed(b)
        x = torch.randn(b, 4)
        got, expected = compiled(x, scale), reference(x, scale)
        close(got, expected)
        got.sum().backward()
        expected.sum().backward()
    close(model.linear.weight.grad, reference.linear.weight.grad)
    assert capsys.readouterr().out.count("batch") == 10


def test_a_decorated_function_with_number_arguments_and_nested_compiled_modules() -> None:
    """`@torch.compile` on a function whose float and int arguments change per call,
    and a compiled module calling a compiled module, in train then eval mode (with a
    dropout): eager's values, after `torch._dynamo.reset()` too."""

    @torch.compile(backend="dvm", dynamic=True)
    def scaled(x: Any, scale: float, shift: int) -> Any:
        return torch.where(x > 0, x * scale, x / scale) - shift

    for b, scale, shift in ((3, 0.5, 1), (5, 1.5, 2), (6, 2.5, 3), (2, 3.5, 4)):
        x = torch.randn(b, 3)
        close(scaled(x, scale, shift), torch.where(x > 0, x * scale, x / scale) - shift)

    torch.manual_seed(1)
    inner = nn.Sequential(nn.Linear(4, 6), nn.Dropout(0.5), nn.BatchNorm1d(6))
    outer = nn.Sequential(inner, nn.Tanh(), nn.Linear(6, 2))
    reference = copy.deepcopy(outer)
    outer[0] = torch.compile(inner, backend="dvm", dynamic=True)
    compiled = torch.compile(outer, backend="dvm", dynamic=True)
    for mode in ("train", "eval", "train", "eval"):
        outer.train(mode == "train")
        reference.train(mode == "train")
        for b in (3, 5):
            x = torch.randn(b, 4)
            torch.manual_seed(b)
            got = compiled(x)
            torch.manual_seed(b)
            close(got, reference(x), 1e-4)
        torch._dynamo.reset()
    assert_same_state(inner, reference[0])


# -- inputs ------------------------------------------------------------------------------------


def layouts(a: Any, ids: Any, mask: Any, half: Any) -> Any:
    return (a * 2 + 1, a.sum(0), (ids * 3) // 2, mask & (ids > 1), mask.sum(), half * ids)


def test_strided_inputs_zero_d_int_and_bool_tensors() -> None:
    """Transposed, step-sliced and channels_last inputs, a 0-d tensor, int64 and bool
    tensors: eager's values, dtypes and shapes."""
    compiled = torch.compile(layouts, backend="dvm", dynamic=True)
    for b in (4, 6, 9):
        torch.manual_seed(b)
        ids, mask = torch.randint(0, 5, (b,)), torch.rand(b) > 0.5
        for a in (torch.randn(3, b).t(), torch.randn(2 * b, 6)[::2, 1::2]):
            args = (a, ids, mask, torch.tensor(0.5))
            for got, expected in zip(compiled(*args), layouts(*args), strict=True):
                assert got.dtype == expected.dtype and got.shape == expected.shape
                close(got, expected)
    conv = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
    compiled_conv = torch.compile(conv, backend="dvm", dynamic=True)
    for b in (2, 3):
        x = torch.randn(b, 3, 6, 7).to(memory_format=torch.channels_last)
        close(compiled_conv(x), conv(x), 1e-4)


def test_a_batch_of_size_zero_gives_eagers_empty_result() -> None:
    model = mlp()
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    for b in (3, 0, 5, 0):
        x = torch.randn(b, 4)
        got = compiled(x)
        assert got.shape == (b, 2)
        close(got, model(x))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_a_module_in_each_float_dtype_matches_eager(dtype: Any) -> None:
    model = mlp().to(dtype)
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    tolerance = 1e-10 if dtype == torch.float64 else 2e-2
    for b in (3, 5):
        x = torch.randn(b, 4, dtype=dtype)
        got, expected = compiled(x), model(x)
        assert got.dtype == dtype
        close(got, expected, tolerance)


def test_a_meta_device_module_runs_in_torch_with_a_logged_reason(caplog: Any) -> None:
    model = copy.deepcopy(mlp()).to("meta")
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        with caplog.at_level(logging.INFO, logger="dvm.torch"):
            for b in (3, 5):
                got = compiled(torch.randn(b, 4, device="meta"))
                assert got.device.type == "meta" and got.shape == (b, 2)

    (report,) = graphs_of(run)
    assert report["ops_on_dvm"] == 0 and "on meta" in "".join(report["reasons"].values())
    assert "on meta" in caplog.text
    assert dvm.torch.reports()[-1] == report


def overwrite(x: Any, ids: Any, values: Any) -> Any:
    columns, rows, mask = x.clone(), x.clone(), (x > 0).clone()
    columns[:, ids] = values
    rows[ids] = 0.5
    mask[ids] = True
    return columns * 2, rows, mask


def test_a_write_at_ids_of_the_call_records_and_a_repeated_id_runs_in_torch() -> None:
    """`x[:, ids] = values` (`index_put` without accumulate): ids of the call, negative
    ones too, are checked at each call for repeats; with a repeat (whose result torch
    leaves undefined) the write runs in torch and gives torch's answer."""
    compiled = torch.compile(overwrite, backend="dvm", dynamic=True)

    def run() -> None:
        for n, ids in ((5, [0, 2]), (6, [3, 1, 4]), (6, [-1, 2, 0]), (7, [1, 1]), (6, [5, 0, 2])):
            torch.manual_seed(n)
            x, index = torch.randn(n, n), torch.tensor(ids)
            values = torch.randn(n, len(ids))
            for got, expected in zip(
                compiled(x, index, values), overwrite(x, index, values), strict=True
            ):
                assert torch.equal(got, expected)

    (report,) = graphs_of(run)
    assert report["ops_on_dvm"] == report["ops_total"], report

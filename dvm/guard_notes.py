"""Guards as a call needs them, as plain data (no sympy): `GuardNote` says what a
failed guard's message is and whether a side of 1 re-specializes, `guard_checker` checks
guards from their generated code (`dvm.expr_code`). `dvm.guards` makes both from the
guards `symbolic-shapes` put on a function; the compile cache keeps them.
"""

# No `from __future__ import annotations` here: `typing.NamedTuple` compiles each field's
# annotation given as text when its class is made (docs/performance.md).
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

from dvm.errors import CallError
from dvm.expr_code import Code, checked_code, function_of_code

G = TypeVar("G")
"""A guard, in whatever form its failure is reported with."""
GuardCheck = Callable[[dict[str, int]], None]
"""A check of some guards on the symbols' values."""


class GuardNote(NamedTuple):
    """What a call needs of a guard `lhs == rhs`."""

    broadcast: bool
    """Whether a broadcast assumed it (where a side is 1, the program takes a variant
    with the symbols that side reads fixed to their values: `CompiledProgram.respecialize`);
    else two sizes must be equal."""
    sides: tuple[str | None, str | None]
    """The symbol each side is (None: another expression)."""
    head: str
    """The start of its message: `@main: %y = tensor.add needs x_0 == y_0 (broadcast), but `."""
    wheres: tuple[str | None, str | None]
    """What each side is (`axis 0 of %x (x_0)`), None for a number."""
    reads: tuple[tuple[str, ...], tuple[str, ...]]
    """The symbols each side reads, sorted."""

    def message(self, lhs: int, rhs: int) -> str:
        """The message of the guard failed with these values of its sides."""
        parts = [
            f"it must be {value}" if where is None else f"{where} is {value}"
            for where, value in zip(self.wheres, (lhs, rhs), strict=True)
        ]
        return f"{self.head}{parts[0]} and {parts[1]}"

    def to_json(self) -> list[Any]:
        reads = [list(names) for names in self.reads]
        return [self.broadcast, list(self.sides), self.head, list(self.wheres), reads]

    @staticmethod
    def from_json(data: Any) -> "GuardNote":
        broadcast, sides, head, wheres, reads = data
        texts = [*sides, *wheres]
        if not isinstance(broadcast, bool) or not isinstance(head, str):
            raise ValueError("not a guard")
        if len(sides) != 2 or len(wheres) != 2 or any(not isinstance(t, str | None) for t in texts):
            raise ValueError("not a guard")
        if len(reads) != 2 or not all(isinstance(n, str) for names in reads for n in names):
            raise ValueError("not a guard")
        read = (tuple(reads[0]), tuple(reads[1]))
        return GuardNote(broadcast, (sides[0], sides[1]), head, (wheres[0], wheres[1]), read)


class GuardFailed(CallError):
    """A guard over index arguments failed at a call: its message, and the note and
    side values the runtime reads to take a variant where a broadcast's side of 1 is
    static (`CompiledProgram.respecialize`)."""

    def __init__(self, note: GuardNote, lhs: int, rhs: int) -> None:
        super().__init__(note.message(lhs, rhs))
        self.note, self.lhs, self.rhs = note, lhs, rhs


def symbol_sides(notes: Sequence[GuardNote]) -> list[str] | None:
    """Each guard's two sides as the symbols they are, when every side is one symbol
    (most guards equate two dims: the argument binder then compares the dims itself),
    else None."""
    sides = [side for note in notes for side in note.sides]
    plain = [side for side in sides if side is not None]
    return plain if len(plain) == len(sides) else None


class GuardSet(NamedTuple):
    """Guards to check together: their symbols, their sides as generated code (two
    values per guard) and their notes."""

    names: list[str]
    code: Code
    notes: list[GuardNote]

    def to_json(self) -> dict[str, Any]:
        return {"names": self.names, "code": self.code, "notes": [n.to_json() for n in self.notes]}

    @staticmethod
    def from_json(data: Any) -> "GuardSet":
        names = data["names"]
        if not all(isinstance(n, str) and n.isidentifier() for n in names):
            raise ValueError("not a guard's symbols")
        code = checked_code(data["code"], names)
        notes = [GuardNote.from_json(n) for n in data["notes"]]
        if len(code[1]) != 2 * len(notes):
            raise ValueError("not two sides per guard")
        return GuardSet(list(names), code, notes)

    def sides(self, origin: str) -> Callable[..., tuple[int, ...]]:
        """The function of the symbols (`names`' order) giving both sides of each guard."""
        return function_of_code(self.code, self.names, origin)

    def checker(
        self, failed: Callable[[GuardNote, int, int], Exception], origin: str
    ) -> GuardCheck:
        """A function that checks the guards on symbol values, raising `failed(...)`;
        `origin` names its generated code."""
        return guard_checker(self, failed, origin)


def guard_checker(
    guards: GuardSet, failed: Callable[[GuardNote, int, int], Exception], origin: str
) -> GuardCheck:
    if not guards.notes:
        return lambda symbols: None
    return sides_checker(guards.sides(origin), guards.names, guards.notes, failed)


def sides_checker(
    sides: Callable[..., Sequence[int]],
    names: Sequence[str],
    guards: Sequence[G],
    failed: Callable[[G, int, int], Exception],
) -> GuardCheck:
    """A check of `guards` on symbol values, raising `failed(guard, lhs, rhs)` for the
    first that fails: `sides` gives both sides of each from the symbols `names`. The
    guards may be notes or `Guard`s (`dvm.guards.guard_check`)."""

    def check(symbols: dict[str, int]) -> None:
        found = failed_guard(guards, sides(*map(symbols.__getitem__, names)))
        if found is not None:
            raise failed(*found)

    return check


def failed_guard(guards: Sequence[G], values: Sequence[int]) -> tuple[G, int, int] | None:
    """The first guard whose sides (`values`, two per guard) differ, with them."""
    if values[0::2] == values[1::2]:  # all hold (a call's usual case): two C-level slices
        return None
    for k, guard in enumerate(guards):
        if values[2 * k] != values[2 * k + 1]:
            return guard, values[2 * k], values[2 * k + 1]
    return None

"""The VM's errors: a malformed or unsafe program, and arrays that do not fit a launch."""

from __future__ import annotations


class BytecodeError(ValueError):
    """A binary (or Program) the VM refuses: `offset` is the byte where the problem is.

    `reason` is a short fixed phrase (tests match it), `detail` says more.
    The offset is -1 when the program was not built from bytes and has no
    layout yet; then `part` may name the entry at fault: its table (`"view"`,
    `"instruction"`, ...) and its index there.
    """

    def __init__(
        self, offset: int, reason: str, detail: str = "", part: tuple[str, int] | None = None
    ) -> None:
        self.offset = offset
        self.reason = reason
        self.detail = detail
        self.part = part
        where = f"at byte {offset}" if offset >= 0 else "in program"
        super().__init__(f"{where}: {reason}" + (f" ({detail})" if detail else ""))


class TakeIndexError(ValueError):
    """A `take` met an index outside the dim it indexes (the data, not the program)."""

    def __init__(self, index: int, size: int, op: str = "take") -> None:
        self.index = index
        self.size = size
        super().__init__(f"{op}: index {index} is out of range for a dim of size {size}")


class LaunchError(ValueError):
    """Arrays that do not match the specialization (dtype, shape, layout, writability)."""

"""The ISA table's own rules: opcodes are explicit, unique and inside their block."""

from __future__ import annotations

import pytest

from dvm.vm import isa


def unary(name: str, code: int) -> isa.OpDef:
    """A unary row like `neg`'s, with another name and code."""
    return isa.BY_NAME["neg"]._replace(name=name, code=code)


def rejection(rows: list[isa.OpDef], blocks: tuple[isa.Block, ...] = isa.BLOCKS) -> str:
    with pytest.raises(isa.OpcodeTableError) as info:
        isa.check_opcodes(rows, blocks)
    return str(info.value)


def test_the_table_passes_its_checks_and_every_code_decodes_to_its_row() -> None:
    isa.check_opcodes(isa.OPCODES)
    assert len(isa.BY_CODE) == len(isa.BY_NAME) == len(isa.OPCODES)
    assert all(isa.BY_CODE[d.code] is d for d in isa.OPCODES)


UNARY_BLOCK = next(b for b in isa.BLOCKS if b.name == "unary")
FREE = isa.next_free_code(UNARY_BLOCK, isa.OPCODES)
"""The code a new unary op would take."""


def test_a_code_taken_twice_names_both_ops_wherever_the_rows_are() -> None:
    """A new unary op given the code after the first unary range (`add`'s) is an error
    naming both, whether it comes before or after `add` in the table."""
    rows = list(isa.OPCODES)
    after = rejection([*rows, unary("new_op", 0x20)])
    before = rejection([unary("new_op", 0x20), *rows])
    for message in (after, before):
        assert "'new_op'" in message and "'add'" in message and "opcode 0x20" in message
        assert (
            f"the unary block is 0x10-0x1f, 0x80-0xbf; its next free code is 0x{FREE:02x}"
            in message
        )


def test_two_new_ops_on_one_free_code() -> None:
    assert FREE is not None
    message = rejection([*isa.OPCODES, unary("new_op", FREE), unary("other_op", FREE)])
    assert f"'new_op' and 'other_op' both take opcode 0x{FREE:02x}" in message


def test_a_code_outside_its_block() -> None:
    outside = next(c for c in range(256) if c not in isa.BY_CODE and c not in UNARY_BLOCK)
    message = rejection([*isa.OPCODES, unary("new_op", outside)])
    assert f"opcode 0x{outside:02x} of 'new_op' is outside its block (the unary block" in message


def test_a_full_block_says_so() -> None:
    tiny = (isa.Block("unary", frozenset({isa.Cat.UNARY}), (range(0x10, 0x12),)),)
    rows = [unary("a", 0x10), unary("b", 0x11), unary("c", 0x12)]
    message = rejection(rows, tiny)
    assert message.endswith(
        "of 'c' is outside its block (the unary block is 0x10-0x11; it is full)"
    )


def test_a_name_taken_twice() -> None:
    assert FREE is not None
    message = rejection([*isa.OPCODES, unary("neg", FREE)])
    assert message == "ISA table: two rows are named 'neg'"


def test_binary_forms_sit_at_fixed_offsets_in_their_blocks() -> None:
    for op in isa.BINARY_OPS:
        assert isa.BY_NAME[op.name].code == op.code
        assert isa.BY_NAME[op.name + ".rs"].code == op.code + isa.RS_OFFSET
        assert isa.BY_NAME[op.name + ".sr"].code == op.code + isa.SR_OFFSET


VERSION_2 = {
    0x00: "nop load store store_acc copy convert broadcast fill select reduce mma loop endloop",
    0x10: "neg abs exp log sqrt rsqrt reciprocal tanh sigmoid erf floor ceil round trunc "
    "logical_not isfinite",
    0x20: "add sub mul div pow max min eq ne lt le gt ge logical_and logical_or",
}
"""The opcodes of format version 2, from each block's first code on: binaries written
then decode the same, so no row may change them (new rows take free codes)."""


def test_the_opcodes_of_version_2_never_change() -> None:
    for first, names in VERSION_2.items():
        for code, name in enumerate(names.split(), start=first):
            assert isa.BY_NAME[name].code == code, name
            if first == 0x20:
                assert isa.BY_NAME[f"{name}.rs"].code == code + 0x20
                assert isa.BY_NAME[f"{name}.sr"].code == code + 0x40

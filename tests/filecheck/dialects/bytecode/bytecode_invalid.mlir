// Malformed bytecode IR: each case fails with exactly its CHECK message.
//
// RUN: dvm-opt %s --parsing-diagnostics --verify-diagnostics --split-input-file | filecheck %s

bytecode.program @order params [] {
  bytecode.arg a0 f32 [x_0]
  bytecode.slot s1 = x_0
}
// CHECK: error: 'bytecode.program' declares s1 where s0 comes next (declarations are numbered in order)

// -----

bytecode.program @flag params [] {
  bytecode.mma r0, r1, r2, [tc]
}
// CHECK: error: mma has no flag 'tc'; flags: ta, tb, acc

// -----

bytecode.program @register params [] {
  bytecode.load x0, v0
}
// CHECK: error: expected r<number>, got 'x0'

// -----

bytecode.program @kind params [] {
  bytecode.reduce r1, r0, avg, {1}, [keepdims]
}
// CHECK: error: expected one of sum, max, min, prod, got 'avg'

// -----

bytecode.program @axis params [] {
  bytecode.reduce r1, r0, max, {9223372036854775808}, [keepdims]
}
// CHECK: error: axis 9223372036854775808 is not one of 0 to 7

// -----

bytecode.program @dtype params [] {
  bytecode.arg a0 f128 [x_0]
}
// CHECK: error: expected an element type (i1, i8, i32, i64, f16, f32, f64, ui8, i16, ui16, ui32, ui64, bf16), got 'f128'

// -----

bytecode.program @walker params [] {
  bytecode.view v0 a0 offset s0 (s1 s2 q0 s3)
}
// CHECK: error: expected gN or lN, got 'q0'

// -----

// In the generic form, an instruction's operands may be any attributes: each is
// checked against its ISA row, as the encoder and the VM read them.
bytecode.program @operand_count params [] {
  "bytecode.load"() <{operand_values = [0 : i64]}> : () -> ()
}
// CHECK: error: 'bytecode.load' takes 2 operands, got 1

// -----

bytecode.program @operand_kind params [] {
  "bytecode.reduce"() <{operand_values = [1 : i64, 0 : i64, "mean", 2 : i64, 1 : i64]}> : () -> ()
}
// CHECK: error: 'bytecode.reduce' operand 2 is no reduce_kind operand

// -----

"bytecode.program"() <{sym_name = "index", params = []}> ({
  "bytecode.slot"() <{index = "s0", expr = #dvm.expr<1>}> : () -> ()
}) : () -> ()
// CHECK: error: "s0" should be of base attribute integer

// -----

bytecode.program @device params [] attributes {dvm.device = "tpu"} {
  bytecode.arg a0 f32 [x_0]
}
// CHECK: error: 'bytecode.program' @device dvm.device must be one of the device presets "host", "ascend910b"

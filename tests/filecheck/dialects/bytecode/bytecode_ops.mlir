// The bytecode dialect: one op per VM instruction, each op and its operand
// syntax derived from the ISA table. Printing, parsing and the generic form
// round-trip.
//
// RUN: dvm-opt %s | filecheck %s
// RUN: dvm-opt %s | dvm-opt | filecheck %s
// RUN: dvm-opt %s --print-op-generic | dvm-opt | filecheck %s
// RUN: dvm-opt %s -t bytecode -o %t.dvmb && dvm-opt %t.dvmb | filecheck %s --check-prefix=BINARY

// CHECK-LABEL: bytecode.program @axpy params [n] {
// CHECK-NEXT:    bytecode.arg a0 f32 [x_0, x_1]
// CHECK-NEXT:    bytecode.arg a1 f32 [x_0, x_1]
// CHECK-NEXT:    bytecode.slot s0 = x_0
// CHECK-NEXT:    bytecode.slot s1 = x_1
// CHECK-NEXT:    bytecode.slot s2 = Max(1, Min(8, x_0))
// CHECK-NEXT:    bytecode.slot s3 = ceiling(x_0/s2)
// CHECK-NEXT:    bytecode.slot s4 = 0
// CHECK-NEXT:    bytecode.slot s5 = 1
// CHECK-NEXT:    bytecode.slot s6 = n
// CHECK-NEXT:    bytecode.grid [s3]
// CHECK-NEXT:    bytecode.reg r0 f32 (s2, s1) at s4
// CHECK-NEXT:    bytecode.reg r1 f32 (s2, s5) at s6
// CHECK-NEXT:    bytecode.view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5)
// CHECK-NEXT:    bytecode.view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5)
// CHECK-NEXT:    bytecode.load r0, v0
// CHECK-NEXT:    bytecode.mul.rs r0, r0, s6
// CHECK-NEXT:    bytecode.add.rs r0, r0, 1.5
// CHECK-NEXT:    bytecode.reduce r1, r0, max, {1}, [keepdims]
// CHECK-NEXT:    bytecode.sub r0, r0, r1
// CHECK-NEXT:    bytecode.fill r1, 0.0, (v0[0], s5)
// CHECK-NEXT:    bytecode.fill r1, -inf, (v0[0], s5)
// CHECK-NEXT:    bytecode.add.rs r0, r0, nan
// CHECK-NEXT:    bytecode.loop s5
// CHECK-NEXT:    bytecode.exp r0, r0
// CHECK-NEXT:    bytecode.endloop
// CHECK-NEXT:    bytecode.convert r0, r0, f32
// CHECK-NEXT:    bytecode.store_acc v1, r0, add
// CHECK-NEXT:  }
bytecode.program @axpy params [n] {
  bytecode.arg a0 f32 [x_0, x_1]
  bytecode.arg a1 f32 [x_0, x_1]
  bytecode.slot s0 = x_0
  bytecode.slot s1 = x_1
  bytecode.slot s2 = Max(1, Min(8, x_0))
  bytecode.slot s3 = ceiling(x_0/s2)
  bytecode.slot s4 = 0
  bytecode.slot s5 = 1
  bytecode.slot s6 = n
  bytecode.grid [s3]
  bytecode.reg r0 f32 (s2, s1) at s4
  bytecode.reg r1 f32 (s2, s5) at s6
  bytecode.view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5)
  bytecode.view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5)
  bytecode.load r0, v0
  bytecode.mul.rs r0, r0, s6
  bytecode.add.rs r0, r0, 1.5
  bytecode.reduce r1, r0, max, {1}, [keepdims]
  bytecode.sub r0, r0, r1
  bytecode.fill r1, 0.0, (v0[0], s5)
  bytecode.fill r1, -inf, (v0[0], s5)
  bytecode.add.rs r0, r0, nan
  bytecode.loop s5
  bytecode.exp r0, r0
  bytecode.endloop
  bytecode.convert r0, r0, f32
  bytecode.store_acc v1, r0, add
}

// Through the binary, the parameter becomes p0 and dims are named after arguments.
// BINARY-LABEL: bytecode.program @axpy params [p0] {
// BINARY-NEXT:    bytecode.arg a0 f32 [a0_0, a0_1]
// BINARY:         bytecode.slot s6 = p0
// BINARY:         bytecode.mul.rs r0, r0, s6

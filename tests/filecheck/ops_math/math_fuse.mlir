// The math ops fuse as every elementwise op does, and lower to one instruction
// each: a clamp by constants is `max.rs` then `min.rs`, a shift or mask by a
// constant the `.rs` form of its instruction.
//
// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s --check-prefix=FUSE
// RUN: dvm-opt %s -p dvm-pipeline | filecheck %s --check-prefix=VM

// FUSE-LABEL: func.func @rope_guard
// FUSE:         tensor.fusion vector (%t, %x)
// FUSE:           tensor.sin
// FUSE:           tensor.mul
// FUSE:           tensor.atan
// FUSE:           tensor.clamp
// FUSE-NEXT:      tensor.yield
// FUSE-NOT:     tensor.fusion
// FUSE:         func.return

// VM-LABEL: bytecode.program @rope_guard_k0
// VM:         bytecode.sin r0, r0
// VM-NEXT:    bytecode.load r1, v1
// VM-NEXT:    bytecode.mul r1, r1, r0
// VM-NEXT:    bytecode.atan r1, r1
// VM-NEXT:    bytecode.max.rs r1, r1, -1.0
// VM-NEXT:    bytecode.min.rs r1, r1, 1.0
// VM-NEXT:    bytecode.store
func.func @rope_guard(%x: tensor<?x?xf32>, %t: tensor<?xf32>) -> tensor<?x?xf32> {
  %lo = arith.constant dense<-1.0> : tensor<f32>
  %hi = arith.constant dense<1.0> : tensor<f32>
  %s = tensor.sin %t : tensor<?xf32>
  %y = tensor.mul %x, %s : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %a = tensor.atan %y : tensor<?x?xf32>
  %c = tensor.clamp %a, %lo, %hi : (tensor<?x?xf32>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}

// FUSE-LABEL: func.func @bits
// FUSE:         tensor.fusion vector (%a)
// FUSE:           tensor.shr
// FUSE:           tensor.bitwise_and
// FUSE:           tensor.shl
// FUSE:           tensor.bitwise_not
// FUSE-NEXT:      tensor.yield

// VM-LABEL: bytecode.program @bits_k1
// VM:         bytecode.load r0, v0
// VM-NEXT:    bytecode.shr.rs r0, r0, 3.0
// VM-NEXT:    bytecode.bitwise_and.rs r0, r0, 255.0
// VM-NEXT:    bytecode.shl.rs r0, r0, 3.0
// VM-NEXT:    bytecode.bitwise_not r0, r0
// VM-NEXT:    bytecode.store v1, r0
func.func @bits(%a: tensor<?xi32>) -> tensor<?xi32> {
  %three = arith.constant dense<3> : tensor<i32>
  %mask = arith.constant dense<255> : tensor<i32>
  %0 = tensor.shr %a, %three : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  %1 = tensor.bitwise_and %0, %mask : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  %2 = tensor.shl %1, %three : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  %3 = tensor.bitwise_not %2 : tensor<?xi32>
  func.return %3 : tensor<?xi32>
}

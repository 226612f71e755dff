// The stack pass: kernels none of which depends on another are launched
// together as one `tensor.stack` -- `parallel` (side by side, sharing the
// cores; the default) or `sequence` (one after another in one launch) --
// at most `max-kernels` (default 8) per stack. The stack's results replace
// the kernels' results everywhere outside it.
//
// RUN: dvm-opt %s --split-input-file -p symbolic-shapes,fuse,stack | filecheck %s
// RUN: dvm-opt %s --split-input-file -p 'symbolic-shapes,fuse,stack{mode=sequence}' | filecheck %s --check-prefix=SEQ
// RUN: dvm-opt %s --split-input-file -p 'symbolic-shapes,fuse,stack{max-kernels=2}' | filecheck %s --check-prefix=MAX2
//
// Bad options are errors when the pipeline is built.
// RUN: not dvm-opt %s -p 'stack{mode=diagonal}' 2>&1 | filecheck %s --check-prefix=BADMODE
// BADMODE: dvm-opt: error: invalid pass pipeline 'stack{mode=diagonal}': stack: mode must be one of ('parallel', 'sequence'), got 'diagonal'
// RUN: not dvm-opt %s -p 'stack{max-kernels=1}' 2>&1 | filecheck %s --check-prefix=BADMAX
// BADMAX: dvm-opt: error: invalid pass pipeline 'stack{max-kernels=1}': stack: max-kernels must be at least 2, got 1

// The q, k and v projections of attention: three independent mix kernels
// reading the same %x, one launch.

// CHECK-LABEL: func.func @qkv(
// CHECK-NEXT:    %q, %k, %v = tensor.stack parallel {dvm.shapes = [#dvm.shape<x_0, 64>, #dvm.shape<x_0, 64>, #dvm.shape<x_0, 64>]} -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
// CHECK-NEXT:      %q_1 = tensor.fusion mix (%x, %wq, %bq)
// CHECK:             tensor.yield %q_2
// CHECK-NEXT:      }
// CHECK-NEXT:      %k_1 = tensor.fusion mix (%x, %wk, %bk)
// CHECK:             tensor.yield %k_2
// CHECK-NEXT:      }
// CHECK-NEXT:      %v_1 = tensor.fusion mix (%x, %wv, %bv)
// CHECK:             tensor.yield %v_2
// CHECK-NEXT:      }
// CHECK-NEXT:      tensor.yield %q_1, %k_1, %v_1 : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %q, %k, %v

// SEQ-LABEL: func.func @qkv(
// SEQ-NEXT:    %q, %k, %v = tensor.stack sequence

// max-kernels=2: q and k share a launch, v is launched alone (a stack of
// one is no stack).
// MAX2-LABEL: func.func @qkv(
// MAX2-NEXT:    %q, %k = tensor.stack parallel
// MAX2-NEXT:      %q_1 = tensor.fusion mix
// MAX2:           %k_1 = tensor.fusion mix
// MAX2:           tensor.yield %q_1, %k_1
// MAX2-NEXT:    }
// MAX2-NEXT:    %v = tensor.fusion mix (%x, %wv, %bv)
// MAX2-NOT:     tensor.stack
// MAX2:         func.return %q, %k, %v
func.func @qkv(%x: tensor<?x64xf32>, %wq: tensor<64x64xf32>, %bq: tensor<64xf32>, %wk: tensor<64x64xf32>, %bk: tensor<64xf32>, %wv: tensor<64x64xf32>, %bv: tensor<64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  %q0 = tensor.matmul %x, %wq : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %q = tensor.add %q0, %bq : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %k0 = tensor.matmul %x, %wk : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %k = tensor.add %k0, %bk : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %v0 = tensor.matmul %x, %wv : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %v = tensor.add %v0, %bv : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  func.return %q, %k, %v : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// A kernel that depends on another is never in its stack: a chain of two
// matmuls stays two launches.

// CHECK-LABEL: func.func @chain(
// CHECK-NOT:     tensor.stack
// CHECK:         %ab = tensor.fusion cube (%a, %b)
// CHECK-NOT:     tensor.stack
// CHECK:         %abc = tensor.fusion cube (%ab, %c)
// CHECK-NOT:     tensor.stack
// CHECK:         func.return %abc
func.func @chain(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %ab = tensor.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %abc = tensor.matmul %ab, %c : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %abc : tensor<?x?xf32>
}

// -----

// Stacks are formed greedily in block order: %a and %b are independent;
// %c needs %a, so it closes that stack and opens the next, which %d (needing
// neither) joins. The second stack reads the first one's results.

// CHECK-LABEL: func.func @partial(
// CHECK-NEXT:    %a, %b = tensor.stack parallel
// CHECK-NEXT:      %a_1 = tensor.fusion vector (%x)
// CHECK:           %b_1 = tensor.fusion cube (%y, %z)
// CHECK:           tensor.yield %a_1, %b_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %c, %d = tensor.stack parallel
// CHECK-NEXT:      %c_1 = tensor.fusion cube (%a, %b)
// CHECK:           %d_1 = tensor.fusion cube (%z, %y)
// CHECK:           tensor.yield %c_1, %d_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %c, %d
func.func @partial(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>, %z: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %a = tensor.exp %x : tensor<?x?xf32>
  %b = tensor.matmul %y, %z : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %c = tensor.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %d = tensor.matmul %z, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c, %d : tensor<?x?xf32>, tensor<?x?xf32>
}

// RUN: dvm-opt %s -p symbolic-shapes,expand-arg-reductions,fuse | filecheck %s
// RUN: dvm-opt %s -p dvm-pipeline | filecheck %s --check-prefix=VM

// A router's top-2 runs in kernels: `expand-arg-reductions` rewrites it as two rounds of an
// argmax (the largest element not taken yet, then the first index holding it),
// which make one kernel that reduces the row; the two indices are concatenated
// (a kernel of its own) and the values gathered by them (an indexed load).
// The call checks that the row has two elements (a guard).

func.func @route(%logits: tensor<?x?xf32>) -> (tensor<?x2xf32>, tensor<?x2xi64>) {
  %v, %i = tensor.top_k %logits {k = 2} : tensor<?x?xf32> -> tensor<?x2xf32>, tensor<?x2xi64>
  func.return %v, %i : tensor<?x2xf32>, tensor<?x2xi64>
}

// CHECK:      dvm.guards = [{check = #dvm.cond<Min(2, logits_1) == 2>
// CHECK:      = tensor.fusion vector
// CHECK:        tensor.reduce_max
// CHECK:        tensor.reduce_min
// CHECK:        tensor.select
// CHECK:        tensor.reduce_max
// CHECK:        tensor.reduce_min
// CHECK:      %i = tensor.fusion vector
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.concat
// CHECK:      tensor.fusion vector
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.take_along_axis
// CHECK-NOT:  tensor.top_k %

// VM:         bytecode.program @route_k0
// VM:         bytecode.reduce
// VM-NOT:     bytecode.program @route_k3

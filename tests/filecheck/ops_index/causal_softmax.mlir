// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s
// RUN: dvm-opt %s -p dvm-pipeline | filecheck %s --check-prefix=VM
// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND

// A causal mask built from iota (row >= col, then select -inf) feeding a
// softmax: one vector kernel that reduces the key axis. The mask reads no
// memory: each iota is computed from the tile's position (`bytecode.iota`).

func.func @causal_softmax(%s: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %s, %c0 : tensor<?x?x?xf32>
  %q = tensor.dim %s, %c1 : tensor<?x?x?xf32>
  %k = tensor.dim %s, %c2 : tensor<?x?x?xf32>
  %row = tensor.iota dim(1) %b, %q, %k : tensor<?x?x?xi64>
  %col = tensor.iota dim(2) %b, %q, %k : tensor<?x?x?xi64>
  %keep = tensor.ge %row, %col : (tensor<?x?x?xi64>, tensor<?x?x?xi64>) -> tensor<?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %masked = tensor.select %keep, %s, %ninf
      : (tensor<?x?x?xi1>, tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  %max = tensor.reduce_max %masked {axes = [2], keepdims = true}
      : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %shifted = tensor.sub %masked, %max
      : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %e = tensor.exp %shifted : tensor<?x?x?xf32>
  %sum = tensor.reduce_sum %e {axes = [2], keepdims = true}
      : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %p = tensor.div %e, %sum : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  func.return %p : tensor<?x?x?xf32>
}

// CHECK:      tensor.fusion vector (%b, %q, %k, %s) {dvm.domain = #dvm.shape<s_0, s_1, s_2>, dvm.reduced = [2 : i64]
// CHECK:        tensor.iota dim(1)
// CHECK-NEXT:   tensor.iota dim(2)
// CHECK-NEXT:   tensor.ge
// CHECK:        tensor.select
// CHECK-NEXT:   tensor.reduce_max
// CHECK:        tensor.reduce_sum
// CHECK-NEXT:   tensor.div
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

// VM:     bytecode.iota {{.*}}{1}
// VM:     bytecode.loop
// VM:     bytecode.iota {{.*}}{2}

// ROUND: %row = tensor.iota dim(1) %b, %q, %k : tensor<?x?x?xi64>
// ROUND: %col = tensor.iota dim(2) %b, %q, %k : tensor<?x?x?xi64>

// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s
// RUN: dvm-opt %s -p dvm-pipeline | filecheck %s --check-prefix=VM
// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND

// Token embeddings looked up by id, position embeddings looked up by an iota
// over the sequence, their sum normalized (LayerNorm over the width): one
// vector kernel that reduces the width. Each lookup is an indexed load of its
// table (`bytecode.take`); the positions' indices are computed in the kernel.
func.func @embed(%table: tensor<?x?xf32>, %positions: tensor<?x?xf32>, %ids: tensor<?x?xi32>,
                 %gamma: tensor<?xf32>, %beta: tensor<?xf32>) -> tensor<?x?x?xf32> {
  %c1 = arith.constant 1 : index
  %s = tensor.dim %ids, %c1 : tensor<?x?xi32>
  %tok = tensor.take %table, %ids dim(0) : (tensor<?x?xf32>, tensor<?x?xi32>) -> tensor<?x?x?xf32>
  %at = tensor.iota dim(0) %s : tensor<?xi64>
  %pos = tensor.take %positions, %at dim(0) : (tensor<?x?xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  %h = tensor.add %tok, %pos : (tensor<?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>
  %mean = tensor.reduce_mean %h {axes = [2], keepdims = true}
      : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %d = tensor.sub %h, %mean : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %d2 = tensor.mul %d, %d : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %var = tensor.reduce_mean %d2 {axes = [2], keepdims = true}
      : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %eps = arith.constant dense<1.0e-05> : tensor<f32>
  %ve = tensor.add %var, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %r = tensor.rsqrt %ve : tensor<?x?x1xf32>
  %n = tensor.mul %d, %r : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %g = tensor.mul %n, %gamma : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %y = tensor.add %g, %beta : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  func.return %y : tensor<?x?x?xf32>
}

// CHECK:      tensor.fusion vector (%table, %ids, %s, %positions, %gamma, %beta) {dvm.domain = #dvm.shape<ids_0, ids_1, table_1>, dvm.reduced = [2 : i64]
// CHECK:        tensor.take %table_1, %ids_1 dim(0)
// CHECK-NEXT:   tensor.iota dim(0)
// CHECK-NEXT:   tensor.take %positions_1, %at dim(0)
// CHECK-NEXT:   tensor.add
// CHECK-NEXT:   tensor.reduce_mean
// CHECK:        tensor.yield
// CHECK-NOT:  tensor.fusion

// VM:     tile.launch @embed_k0{{.*}}dvm.take_checks
// VM:     bytecode.program @embed_k0
// VM:     bytecode.load
// VM-NEXT: bytecode.iota
// VM:     bytecode.take
// VM-NEXT: bytecode.take

// ROUND: %tok = tensor.take %table, %ids dim(0) : (tensor<?x?xf32>, tensor<?x?xi32>) -> tensor<?x?x?xf32>
// ROUND: %pos = tensor.take %positions, %at dim(0) : (tensor<?x?xf32>, tensor<?xi64>) -> tensor<?x?xf32>

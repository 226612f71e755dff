// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND
// RUN: dvm-opt %s -p dvm-pipeline | filecheck %s

// Upstream's index tensors (`tensor<?xindex>`) are indices too: on the VM an
// `index` element is i64, so the lookup's kernel takes an i64 argument.

func.func @lookup(%table: tensor<?x?xf32>, %ids: tensor<?xindex>) -> tensor<?x?xf32> {
  %e = tensor.take %table, %ids dim(0) : (tensor<?x?xf32>, tensor<?xindex>) -> tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}

// ROUND: tensor.take %table, %ids dim(0) : (tensor<?x?xf32>, tensor<?xindex>) -> tensor<?x?xf32>

// CHECK:      bytecode.program @lookup_k0
// CHECK:        bytecode.arg a1 i64 [ids_0]
// CHECK:        bytecode.take

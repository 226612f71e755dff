// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s

// A KV-cache append: the cache and the new rows joined by a concat (a kernel
// of its own, whose result has cache_0 + new_0 rows), and the queries
// scoring every key in a cube kernel that reads the joined keys transposed.

func.func @attend(%q: tensor<?x?xf32>, %cache: tensor<?x?xf32>, %new: tensor<?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %keys = tensor.concat dim(0) %cache, %new : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %scores = tensor.matmul %q, %keys {transpose_b = true}
      : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %keys, %scores : tensor<?x?xf32>, tensor<?x?xf32>
}

// CHECK:      %keys = tensor.fusion vector (%cache, %new) {{.*}}dvm.shape = #dvm.shape<cache_0 + new_0, q_1>
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.concat dim(0)
// CHECK-NEXT:   tensor.yield
// CHECK:      %scores = tensor.fusion cube (%q, %keys)
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.matmul {{.*}}transpose_b = true
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

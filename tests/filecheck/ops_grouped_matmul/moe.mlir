// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s
// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND

// A mixture of experts' feed-forward layer, tokens sorted by expert and the
// tokens per expert given: the up-projection with its bias and SiLU is one mix
// kernel (the grouped matmul's epilogue), the down-projection with the residual
// another. The sizes are data: each kernel reads them as an input.

func.func @moe(%x: tensor<?x?xf32>, %sizes: tensor<?xi32>, %w_up: tensor<?x?x?xf32>,
               %b_up: tensor<?x?xf32>, %w_down: tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  %h = tensor.grouped_matmul %x, %sizes, %w_up, %b_up
      : (tensor<?x?xf32>, tensor<?xi32>, tensor<?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tensor.sigmoid %h : tensor<?x?xf32>
  %a = tensor.mul %h, %s : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %d = tensor.grouped_matmul %a, %sizes, %w_down
      : (tensor<?x?xf32>, tensor<?xi32>, tensor<?x?x?xf32>) -> tensor<?x?xf32>
  %y = tensor.add %x, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// CHECK:      dvm.guards = [{check = #dvm.cond<x_1 == w_up_1>, kind = "equal"
// CHECK:      %[[H:.*]] = tensor.fusion mix (%x, %sizes, %w_up, %b_up)
// CHECK-NEXT: ^{{.*}}(%[[X:.*]]: tensor<?x?xf32>, %[[G:.*]]: tensor<?xi32>, %[[W:.*]]: tensor<?x?x?xf32>, %[[B:.*]]: tensor<?x?xf32>):
// CHECK-NEXT:   %[[P:.*]] = tensor.grouped_matmul %[[X]], %[[G]], %[[W]], %[[B]] {dvm.shape = #dvm.shape<x_0, w_up_2>}
// CHECK-NEXT:   tensor.sigmoid %[[P]]
// CHECK-NEXT:   tensor.mul
// CHECK-NEXT:   tensor.yield
// CHECK:      tensor.fusion mix (%[[H]], %sizes, %w_down, %x)
// CHECK-NEXT: ^{{.*}}:
// CHECK-NEXT:   tensor.grouped_matmul
// CHECK-NEXT:   tensor.add
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

// ROUND: %h = tensor.grouped_matmul %x, %sizes, %w_up, %b_up : (tensor<?x?xf32>, tensor<?xi32>, tensor<?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// ROUND: %d = tensor.grouped_matmul %a, %sizes, %w_down : (tensor<?x?xf32>, tensor<?xi32>, tensor<?x?x?xf32>) -> tensor<?x?xf32>


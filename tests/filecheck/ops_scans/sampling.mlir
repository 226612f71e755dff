// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s
// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND

// A sampling step: softmax, the greedy token, and a top-p mask over the 8 most
// probable tokens. The softmax and the argmax are one vector kernel (the argmax
// as a max, a compare with an iota and a min over the same axis); the top_k is a
// kernel of its own, which walks its axis in order merging chunks into the 8
// largest so far (`top_k`), and so is the cumsum (`scan`); the mask and its
// renormalization are a last vector kernel.

func.func @sample(%logits: tensor<?x?xf32>, %top_p: tensor<f32>)
    -> (tensor<?xi64>, tensor<?x8xf32>, tensor<?x8xi64>) {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %max = tensor.reduce_max %logits {axes = [1], keepdims = true}
      : tensor<?x?xf32> -> tensor<?x1xf32>
  %shifted = tensor.sub %logits, %max : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %exp = tensor.exp %shifted : tensor<?x?xf32>
  %sum = tensor.reduce_sum %exp {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %probs = tensor.div %exp, %sum : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %greedy = tensor.argmax %probs {axis = 1} : tensor<?x?xf32> -> tensor<?xi64>
  %top, %tokens = tensor.top_k %probs {k = 8} : tensor<?x?xf32> -> tensor<?x8xf32>, tensor<?x8xi64>
  %before = tensor.cumsum %top {axis = 1, exclusive = true} : tensor<?x8xf32> -> tensor<?x8xf32>
  %keep = tensor.lt %before, %top_p : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xi1>
  %kept = tensor.select %keep, %top, %zero
      : (tensor<?x8xi1>, tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xf32>
  %total = tensor.reduce_sum %kept {axes = [1], keepdims = true}
      : tensor<?x8xf32> -> tensor<?x1xf32>
  %nucleus = tensor.div %kept, %total : (tensor<?x8xf32>, tensor<?x1xf32>) -> tensor<?x8xf32>
  func.return %greedy, %nucleus, %tokens : tensor<?xi64>, tensor<?x8xf32>, tensor<?x8xi64>
}

// CHECK:      %probs, %greedy{{.*}} = tensor.fusion vector (%logits, {{.*}}dvm.reduced = [1 : i64]
// CHECK:        tensor.reduce_max
// CHECK-NEXT:   tensor.sub
// CHECK-NEXT:   tensor.exp
// CHECK-NEXT:   tensor.reduce_sum
// CHECK-NEXT:   tensor.div
// CHECK-NEXT:   tensor.reduce_max
// CHECK-NEXT:   tensor.eq
// CHECK-NEXT:   tensor.isnan
// CHECK-NEXT:   tensor.logical_or
// CHECK-NEXT:   tensor.iota dim(1)
// CHECK-NEXT:   tensor.select
// CHECK-NEXT:   tensor.reduce_min
// CHECK:        tensor.yield
// CHECK-NEXT: }
// CHECK-NEXT: %top, %tokens = tensor.fusion vector (%probs)
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   tensor.top_k
// CHECK-NEXT:   tensor.yield
// CHECK-NEXT: }
// CHECK-NEXT: %before = tensor.fusion vector (%top)
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   tensor.cumsum {{.*}}exclusive = true
// CHECK-NEXT:   tensor.yield
// CHECK-NEXT: }
// CHECK-NEXT: %nucleus = tensor.fusion vector (%before, %top_p, %top)
// CHECK:        tensor.lt
// CHECK:        tensor.select
// CHECK-NEXT:   tensor.reduce_sum
// CHECK-NEXT:   tensor.div
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

// ROUND: %greedy = tensor.argmax %probs {axis = 1 : i64} : tensor<?x?xf32> -> tensor<?xi64>
// ROUND: %top, %tokens = tensor.top_k %probs {k = 8 : i64} : tensor<?x?xf32> -> tensor<?x8xf32>, tensor<?x8xi64>
// ROUND: %before = tensor.cumsum %top {axis = 1 : i64, exclusive = true} : tensor<?x8xf32> -> tensor<?x8xf32>

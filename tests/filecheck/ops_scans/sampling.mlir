// RUN: dvm-opt %s -p symbolic-shapes,expand-arg-reductions,fuse | filecheck %s
// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND

// A sampling step: softmax, the greedy token, and a top-p mask over the 8 most
// probable tokens. The softmax and the argmax are one vector kernel (the argmax
// as a max, a compare with an iota and a min over the same axis), which holds
// the first rounds of the top_k too (each round an argmax over the elements not
// taken yet); its last rounds are the next kernel, its indices are concatenated
// and its values gathered by them; the cumsum is a kernel of its own, which
// walks its axis in order (`scan`); the mask and its renormalization are a last
// vector kernel.

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
// CHECK-NEXT:   tensor.iota dim(1)
// CHECK-NEXT:   tensor.reduce_max
// CHECK:        tensor.yield
// CHECK-NEXT: }
// CHECK-NEXT: %{{.*}} = tensor.fusion vector ({{.*}}dvm.reduced = [1 : i64]
// CHECK:      %tokens = tensor.fusion vector
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   tensor.concat dim(1)
// CHECK:      %[[TOP:.*]] = tensor.fusion vector (%probs, %tokens)
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   tensor.take_along_axis
// CHECK:      %before = tensor.fusion vector (%[[TOP]])
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   tensor.cumsum {{.*}}exclusive = true
// CHECK-NEXT:   tensor.yield
// CHECK-NEXT: }
// CHECK-NEXT: %nucleus = tensor.fusion vector (%before, %top_p, %[[TOP]])
// CHECK:        tensor.lt
// CHECK:        tensor.select
// CHECK-NEXT:   tensor.reduce_sum
// CHECK-NEXT:   tensor.div
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

// ROUND: %greedy = tensor.argmax %probs {axis = 1 : i64} : tensor<?x?xf32> -> tensor<?xi64>
// ROUND: %top, %tokens = tensor.top_k %probs {k = 8 : i64} : tensor<?x?xf32> -> tensor<?x8xf32>, tensor<?x8xi64>
// ROUND: %before = tensor.cumsum %top {axis = 1 : i64, exclusive = true} : tensor<?x8xf32> -> tensor<?x8xf32>

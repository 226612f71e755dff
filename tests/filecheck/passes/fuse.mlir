// The fuse pass: ops become `tensor.fusion` kernels of kind vector (elementwise,
// reductions, layout), cube (one matmul) or mix (a matmul and its elementwise
// epilogue); legality is proved on the symbolic shapes. Each kernel shows its
// iteration domain (`dvm.domain`) and reduced domain axes (`dvm.reduced`).
//
// RUN: dvm-opt %s --split-input-file -p symbolic-shapes,fuse | filecheck %s
//
// Options: `kinds` limits which kinds may hold more than one op (a lone
// matmul is still a cube kernel); `max-ops` bounds the ops in one kernel
// (layout ops count, constants do not).
// RUN: dvm-opt %s --split-input-file -p 'symbolic-shapes,fuse{kinds=vector}' | filecheck %s --check-prefix=VECTOR
// RUN: dvm-opt %s --split-input-file -p 'symbolic-shapes,fuse{max-ops=3}' | filecheck %s --check-prefix=MAXOPS
//
// Bad options are errors when the pipeline is built.
// RUN: not dvm-opt %s -p 'fuse{kinds=scalar}' 2>&1 | filecheck %s --check-prefix=BADKIND
// BADKIND: dvm-opt: error: invalid pass pipeline 'fuse{kinds=scalar}': fuse: unknown kernel kinds ['scalar']; use ('vector', 'cube', 'mix')
// RUN: not dvm-opt %s -p 'fuse{max-ops=0}' 2>&1 | filecheck %s --check-prefix=BADMAX
// BADMAX: dvm-opt: error: invalid pass pipeline 'fuse{max-ops=0}': fuse: max-ops must be at least 1, got 0

// LayerNorm: two row reductions with their producers and consumers, all in
// one vector kernel over (x_0, x_1) reducing axis 1. The splat constant is
// cloned into the kernel; w and b are inputs.

// CHECK-LABEL: func.func @layernorm(
// CHECK-NEXT:    %y = tensor.fusion vector (%x, %w, %b) {dvm.domain = #dvm.shape<x_0, x_1>, dvm.reduced = [1 : i64], dvm.shape = #dvm.shape<x_0, x_1>} : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x?xf32>, %w_1: tensor<?xf32>, %b_1: tensor<?xf32>):
// CHECK-NEXT:      %mean = tensor.reduce_mean %x_1
// CHECK-NEXT:      %d = tensor.sub %x_1, %mean
// CHECK-NEXT:      %d2 = tensor.mul %d, %d
// CHECK-NEXT:      %var = tensor.reduce_mean %d2
// CHECK-NEXT:      %eps = arith.constant {dvm.shape = #dvm.shape<>} dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:      %ve = tensor.add %var, %eps
// CHECK-NEXT:      %r = tensor.rsqrt %ve
// CHECK-NEXT:      %n = tensor.mul %d, %r
// CHECK-NEXT:      %s = tensor.mul %n, %w_1
// CHECK-NEXT:      %y_1 = tensor.add %s, %b_1
// CHECK-NEXT:      tensor.yield %y_1 : tensor<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<?x?xf32>

// kinds=vector changes nothing here: LayerNorm is all vector work.
// VECTOR-LABEL: func.func @layernorm(
// VECTOR-NEXT:    %y = tensor.fusion vector (%x, %w, %b) {dvm.domain = #dvm.shape<x_0, x_1>, dvm.reduced = [1 : i64],
// VECTOR-NOT:     tensor.fusion
// VECTOR:         func.return %y

// max-ops=3: three kernels of three compute ops each; %d crosses from the
// first to the last.
// MAXOPS-LABEL: func.func @layernorm(
// MAXOPS-NEXT:    %d, %d2 = tensor.fusion vector (%x) {dvm.domain = #dvm.shape<x_0, x_1>, dvm.reduced = [1 : i64], dvm.shapes = [#dvm.shape<x_0, x_1>, #dvm.shape<x_0, x_1>]}
// MAXOPS-NEXT:    ^bb0(%x_1: tensor<?x?xf32>):
// MAXOPS-NEXT:      %mean = tensor.reduce_mean %x_1
// MAXOPS-NEXT:      %d_1 = tensor.sub %x_1, %mean
// MAXOPS-NEXT:      %d2_1 = tensor.mul %d_1, %d_1
// MAXOPS-NEXT:      tensor.yield %d_1, %d2_1
// MAXOPS-NEXT:    }
// MAXOPS-NEXT:    %r = tensor.fusion vector (%d2) {dvm.domain = #dvm.shape<x_0, x_1>, dvm.reduced = [1 : i64], dvm.shape = #dvm.shape<x_0, 1>}
// MAXOPS-NEXT:    ^bb0(%d2_1: tensor<?x?xf32>):
// MAXOPS-NEXT:      %var = tensor.reduce_mean %d2_1
// MAXOPS-NEXT:      %eps = arith.constant
// MAXOPS-NEXT:      %ve = tensor.add %var, %eps
// MAXOPS-NEXT:      %r_1 = tensor.rsqrt %ve
// MAXOPS-NEXT:      tensor.yield %r_1
// MAXOPS-NEXT:    }
// MAXOPS-NEXT:    %y = tensor.fusion vector (%d, %r, %w, %b) {dvm.domain = #dvm.shape<x_0, x_1>, dvm.shape = #dvm.shape<x_0, x_1>}
// MAXOPS-NEXT:    ^bb0(%d_1: tensor<?x?xf32>, %r_1: tensor<?x1xf32>, %w_1: tensor<?xf32>, %b_1: tensor<?xf32>):
// MAXOPS-NEXT:      %n = tensor.mul %d_1, %r_1
// MAXOPS-NEXT:      %s = tensor.mul %n, %w_1
// MAXOPS-NEXT:      %y_1 = tensor.add %s, %b_1
// MAXOPS-NEXT:      tensor.yield %y_1
// MAXOPS-NEXT:    }
// MAXOPS-NEXT:    func.return %y
func.func @layernorm(%x: tensor<?x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
  %mean = tensor.reduce_mean %x {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %x, %mean : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %d2 = tensor.mul %d, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %var = tensor.reduce_mean %d2 {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %ve = tensor.add %var, %eps : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %r = tensor.rsqrt %ve : tensor<?x1xf32>
  %n = tensor.mul %d, %r : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %s = tensor.mul %n, %w : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %y = tensor.add %s, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// addmm + relu: the matmul and its elementwise epilogue form one mix kernel
// over (x_0, w_1) contracting x_1 (the domain lists K last).

// CHECK-LABEL: func.func @addmm_relu(
// CHECK-NEXT:    %y = tensor.fusion mix (%x, %w, %bias) {dvm.domain = #dvm.shape<x_0, w_1, x_1>, dvm.shape = #dvm.shape<x_0, w_1>} : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x?xf32>, %w_1: tensor<?x?xf32>, %bias_1: tensor<?xf32>):
// CHECK-NEXT:      %mm = tensor.matmul %x_1, %w_1 {dvm.shape = #dvm.shape<x_0, w_1>}
// CHECK-NEXT:      %z = tensor.add %mm, %bias_1 {dvm.shape = #dvm.shape<x_0, w_1>}
// CHECK-NEXT:      %zero = arith.constant {dvm.shape = #dvm.shape<>} dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:      %y_1 = tensor.max %z, %zero {dvm.shape = #dvm.shape<x_0, w_1>}
// CHECK-NEXT:      tensor.yield %y_1 : tensor<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y

// kinds=vector: no mix kernel, so a lone cube kernel and a vector epilogue.
// VECTOR-LABEL: func.func @addmm_relu(
// VECTOR-NEXT:    %mm = tensor.fusion cube (%x, %w) {dvm.domain = #dvm.shape<x_0, w_1, x_1>, dvm.shape = #dvm.shape<x_0, w_1>}
// VECTOR-NEXT:    ^bb0(%x_1: tensor<?x?xf32>, %w_1: tensor<?x?xf32>):
// VECTOR-NEXT:      %mm_1 = tensor.matmul %x_1, %w_1
// VECTOR-NEXT:      tensor.yield %mm_1
// VECTOR-NEXT:    }
// VECTOR-NEXT:    %y = tensor.fusion vector (%mm, %bias) {dvm.domain = #dvm.shape<x_0, w_1>, dvm.shape = #dvm.shape<x_0, w_1>}
// VECTOR-NEXT:    ^bb0(%mm_1: tensor<?x?xf32>, %bias_1: tensor<?xf32>):
// VECTOR-NEXT:      %z = tensor.add %mm_1, %bias_1
// VECTOR-NEXT:      %zero = arith.constant
// VECTOR-NEXT:      %y_1 = tensor.max %z, %zero
// VECTOR-NEXT:      tensor.yield %y_1
// VECTOR-NEXT:    }
// VECTOR-NEXT:    func.return %y
func.func @addmm_relu(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %mm = tensor.matmul %x, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %z = tensor.add %mm, %bias : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %y = tensor.max %z, %zero : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// Column reductions: two reductions over axis 0 of the same input, one
// through a select, become one kernel with two outputs (one read of %x).

// CHECK-LABEL: func.func @column_stats(
// CHECK-NEXT:    %sum, %mx = tensor.fusion vector (%x) {dvm.domain = #dvm.shape<x_0, x_1>, dvm.reduced = [0 : i64], dvm.shapes = [#dvm.shape<x_1>, #dvm.shape<x_1>]} : (tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x?xf32>):
// CHECK-NEXT:      %zero = arith.constant
// CHECK-NEXT:      %pos = tensor.gt %x_1, %zero
// CHECK-NEXT:      %p = tensor.select %pos, %x_1, %zero
// CHECK-NEXT:      %sum_1 = tensor.reduce_sum %p {dvm.shape = #dvm.shape<x_1>, axes = [0 : i64]}
// CHECK-NEXT:      %mx_1 = tensor.reduce_max %x_1 {dvm.shape = #dvm.shape<x_1>, axes = [0 : i64]}
// CHECK-NEXT:      tensor.yield %sum_1, %mx_1 : tensor<?xf32>, tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %sum, %mx

// max-ops=3: the select chain (3 ops) is full, so the max is a kernel of its own.
// MAXOPS-LABEL: func.func @column_stats(
// MAXOPS-NEXT:    %sum = tensor.fusion vector (%x) {dvm.domain = #dvm.shape<x_0, x_1>, dvm.reduced = [0 : i64], dvm.shape = #dvm.shape<x_1>}
// MAXOPS:         %mx = tensor.fusion vector (%x) {dvm.domain = #dvm.shape<x_0, x_1>, dvm.reduced = [0 : i64], dvm.shape = #dvm.shape<x_1>}
func.func @column_stats(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %pos = tensor.gt %x, %zero : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xi1>
  %p = tensor.select %pos, %x, %zero : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %sum = tensor.reduce_sum %p {axes = [0]} : tensor<?x?xf32> -> tensor<?xf32>
  %mx = tensor.reduce_max %x {axes = [0]} : tensor<?x?xf32> -> tensor<?xf32>
  func.return %sum, %mx : tensor<?xf32>, tensor<?xf32>
}

// -----

// A reduction before a matmul is a kernel boundary: matmul operands come
// from outside the kernel, so the softmax is one vector kernel and the
// matmul a cube kernel reading it.

// CHECK-LABEL: func.func @attention(
// CHECK-NEXT:    %p = tensor.fusion vector (%s) {dvm.domain = #dvm.shape<s_0, s_1>, dvm.reduced = [1 : i64], dvm.shape = #dvm.shape<s_0, s_1>}
// CHECK-NEXT:    ^bb0(%s_1: tensor<?x?xf32>):
// CHECK-NEXT:      %m = tensor.reduce_max %s_1
// CHECK-NEXT:      %d = tensor.sub %s_1, %m
// CHECK-NEXT:      %e = tensor.exp %d
// CHECK-NEXT:      %z = tensor.reduce_sum %e
// CHECK-NEXT:      %p_1 = tensor.div %e, %z
// CHECK-NEXT:      tensor.yield %p_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %c = tensor.fusion cube (%p, %v) {dvm.domain = #dvm.shape<s_0, v_1, s_1>, dvm.shape = #dvm.shape<s_0, v_1>}
// CHECK-NEXT:    ^bb0(%p_1: tensor<?x?xf32>, %v_1: tensor<?x?xf32>):
// CHECK-NEXT:      %c_1 = tensor.matmul %p_1, %v_1
// CHECK-NEXT:      tensor.yield %c_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %c
func.func @attention(%s: tensor<?x?xf32>, %v: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %m = tensor.reduce_max %s {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %s, %m : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %e = tensor.exp %d : tensor<?x?xf32>
  %z = tensor.reduce_sum %e {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %p = tensor.div %e, %z : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %c = tensor.matmul %p, %v : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}

// -----

// A matmul's epilogue may reduce the result's columns when there are few (at
// most 512): a tile holds whole rows of the result, so a projection and the
// normalization after it are one mix kernel.

// CHECK-LABEL: func.func @projection_norm(
// CHECK-NEXT:    %d = tensor.fusion mix (%x, %w) {dvm.domain = #dvm.shape<x_0, 64, 32>, dvm.reduced = [1 : i64], dvm.shape = #dvm.shape<x_0, 64>}
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x32xf32>, %w_1: tensor<32x64xf32>):
// CHECK-NEXT:      %y = tensor.matmul %x_1, %w_1
// CHECK-NEXT:      %m = tensor.reduce_mean %y
// CHECK-NEXT:      %d_1 = tensor.sub %y, %m
// CHECK-NEXT:      tensor.yield %d_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %d
func.func @projection_norm(%x: tensor<?x32xf32>, %w: tensor<32x64xf32>) -> tensor<?x64xf32> {
  %y = tensor.matmul %x, %w : (tensor<?x32xf32>, tensor<32x64xf32>) -> tensor<?x64xf32>
  %m = tensor.reduce_mean %y {axes = [1], keepdims = true} : tensor<?x64xf32> -> tensor<?x1xf32>
  %d = tensor.sub %y, %m : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
  func.return %d : tensor<?x64xf32>
}

// -----

// A dynamic number of columns fits a tile only when there are few: the fused
// kernel is a guarded choice, taken when there are at most 512 of them (it may
// assume so, `dvm.bounded`), with the matmul and the softmax apart otherwise.

// CHECK-LABEL: func.func @scores_softmax(
// CHECK-NEXT:    %p = tensor.choice [k_1 <= 512] {dvm.shape = #dvm.shape<q_0, k_1>} -> (tensor<?x?xf32>) {
// CHECK-NEXT:      %p_1 = tensor.fusion mix (%q, %k) {dvm.domain = #dvm.shape<q_0, k_1, 16>, dvm.reduced = [1 : i64], dvm.bounded = [#dvm.cond<k_1 <= 512>], dvm.shape = #dvm.shape<q_0, k_1>}
// CHECK-NEXT:      ^bb0(%q_1: tensor<?x16xf32>, %k_1: tensor<16x?xf32>):
// CHECK-NEXT:        %s = tensor.matmul %q_1, %k_1
// CHECK-NEXT:        %m = tensor.reduce_max %s
// CHECK:             tensor.yield %p_2
// CHECK:           } else {
// CHECK-NEXT:      %s = tensor.fusion cube (%q, %k) {dvm.domain = #dvm.shape<q_0, k_1, 16>, dvm.shape = #dvm.shape<q_0, k_1>}
// CHECK:           %p_2 = tensor.fusion vector (%s) {dvm.domain = #dvm.shape<q_0, k_1>, dvm.reduced = [1 : i64], dvm.shape = #dvm.shape<q_0, k_1>}
// CHECK:           tensor.yield %p_2
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %p
func.func @scores_softmax(%q: tensor<?x16xf32>, %k: tensor<16x?xf32>) -> tensor<?x?xf32> {
  %s = tensor.matmul %q, %k : (tensor<?x16xf32>, tensor<16x?xf32>) -> tensor<?x?xf32>
  %m = tensor.reduce_max %s {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %s, %m : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %e = tensor.exp %d : tensor<?x?xf32>
  %z = tensor.reduce_sum %e {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %p = tensor.div %e, %z : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %p : tensor<?x?xf32>
}

// -----

// Not over more static columns than that, nor over the rows, which tiles cut.

// CHECK-LABEL: func.func @wide_columns(
// CHECK-NEXT:    %y = tensor.fusion cube (%x, %w) {dvm.domain = #dvm.shape<x_0, 1024, 32>, dvm.shape = #dvm.shape<x_0, 1024>}
// CHECK:         %s = tensor.fusion vector (%y) {dvm.domain = #dvm.shape<x_0, 1024>, dvm.reduced = [1 : i64], dvm.shape = #dvm.shape<x_0>}
// CHECK:         %c = tensor.fusion cube (%x, %v) {dvm.domain = #dvm.shape<x_0, 64, 32>, dvm.shape = #dvm.shape<x_0, 64>}
// CHECK:         %t = tensor.fusion vector (%c) {dvm.domain = #dvm.shape<x_0, 64>, dvm.reduced = [0 : i64], dvm.shape = #dvm.shape<64>}
func.func @wide_columns(%x: tensor<?x32xf32>, %w: tensor<32x1024xf32>, %v: tensor<32x64xf32>) -> (tensor<?xf32>, tensor<64xf32>) {
  %y = tensor.matmul %x, %w : (tensor<?x32xf32>, tensor<32x1024xf32>) -> tensor<?x1024xf32>
  %s = tensor.reduce_max %y {axes = [1]} : tensor<?x1024xf32> -> tensor<?xf32>
  %c = tensor.matmul %x, %v : (tensor<?x32xf32>, tensor<32x64xf32>) -> tensor<?x64xf32>
  %t = tensor.reduce_sum %c {axes = [0]} : tensor<?x64xf32> -> tensor<64xf32>
  func.return %s, %t : tensor<?xf32>, tensor<64xf32>
}

// -----

// Transposes are views: the transpose of the input %x is read through
// strides, the transpose of the result written through strides, so one
// kernel over the domain (x_1, x_0) does everything.

// CHECK-LABEL: func.func @views(
// CHECK-NEXT:    %et = tensor.fusion vector (%x, %y) {dvm.domain = #dvm.shape<x_1, x_0>, dvm.shape = #dvm.shape<x_0, x_1>}
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x?xf32>, %y_1: tensor<?x?xf32>):
// CHECK-NEXT:      %xt = tensor.transpose %x_1
// CHECK-NEXT:      %s = tensor.add %xt, %y_1
// CHECK-NEXT:      %e = tensor.exp %s
// CHECK-NEXT:      %et_1 = tensor.transpose %e
// CHECK-NEXT:      tensor.yield %et_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %et
func.func @views(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %xt = tensor.transpose %x {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %s = tensor.add %xt, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %e = tensor.exp %s : tensor<?x?xf32>
  %et = tensor.transpose %e {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %et : tensor<?x?xf32>
}

// -----

// Splitting heads (expand_shape, then transpose) in front of a matmul: both
// operands are strided views of %q and %k, so the scores are one cube kernel
// over (batch, head, row, col, K) = (q_0, 4, q_1, q_1, 16).

// CHECK-LABEL: func.func @heads(
// CHECK:         %s = tensor.fusion cube (%q, %B, %S, %k) {dvm.domain = #dvm.shape<q_0, 4, q_1, q_1, 16>, dvm.shape = #dvm.shape<q_0, 4, q_1, q_1>}
// CHECK-NEXT:    ^bb0(%q_1: tensor<?x?x64xf32>, %B_1: index, %S_1: index, %k_1: tensor<?x?x64xf32>):
// CHECK-NEXT:      %q4 = tensor.expand_shape %q_1
// CHECK-NEXT:      %k4 = tensor.expand_shape %k_1
// CHECK-NEXT:      %qh = tensor.transpose %q4
// CHECK-NEXT:      %kt = tensor.transpose %k4
// CHECK-NEXT:      %s_1 = tensor.matmul %qh, %kt {dvm.shape = #dvm.shape<q_0, 4, q_1, q_1>}
// CHECK-NEXT:      tensor.yield %s_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %s

// max-ops=3 counts the layout ops: %k's view chain becomes a copy kernel.
// MAXOPS-LABEL: func.func @heads(
// MAXOPS:         %kt = tensor.fusion vector (%k, %B, %S)
// MAXOPS:         %s = tensor.fusion cube (%q, %B, %S, %kt)
func.func @heads(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>) -> tensor<?x4x?x?xf32> {
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %B = tensor.dim %q, %i0 : tensor<?x?x64xf32>
  %S = tensor.dim %q, %i1 : tensor<?x?x64xf32>
  %q4 = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [%B, %S, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
  %k4 = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [%B, %S, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
  %qh = tensor.transpose %q4 {perm = [0, 2, 1, 3]} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %kt = tensor.transpose %k4 {perm = [0, 2, 3, 1]} : tensor<?x?x4x16xf32> -> tensor<?x4x16x?xf32>
  %s = tensor.matmul %qh, %kt : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  func.return %s : tensor<?x4x?x?xf32>
}

// -----

// Merging heads of an *input* (transpose, then collapse of the transposed
// dims) is not a strided view: the collapsed dims' strides (16 * h_2 and 1)
// are not contiguous. The transpose becomes a copy kernel of its own.

// CHECK-LABEL: func.func @merge_heads(
// CHECK-NEXT:    %t = tensor.fusion vector (%h) {dvm.domain = #dvm.shape<h_0, h_2, 4, 16>, dvm.shape = #dvm.shape<h_0, h_2, 4, 16>}
// CHECK-NEXT:    ^bb0(%h_1: tensor<?x4x?x16xf32>):
// CHECK-NEXT:      %t_1 = tensor.transpose %h_1
// CHECK-NEXT:      tensor.yield %t_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = tensor.fusion vector (%t, %b) {dvm.domain = #dvm.shape<h_0, h_2, 64>, dvm.shape = #dvm.shape<h_0, h_2, 64>}
// CHECK-NEXT:    ^bb0(%t_1: tensor<?x?x4x16xf32>, %b_1: tensor<64xf32>):
// CHECK-NEXT:      %c = tensor.collapse_shape %t_1
// CHECK-NEXT:      %y_1 = tensor.add %c, %b_1
// CHECK-NEXT:      tensor.yield %y_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y
func.func @merge_heads(%h: tensor<?x4x?x16xf32>, %b: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %t = tensor.transpose %h {perm = [0, 2, 1, 3]} : tensor<?x4x?x16xf32> -> tensor<?x?x4x16xf32>
  %c = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<?x?x4x16xf32> into tensor<?x?x64xf32>
  %y = tensor.add %c, %b : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  func.return %y : tensor<?x?x64xf32>
}

// -----

// Streaming fusion: two independent row reductions over %x (x_0, x_1) and
// %y (y_0, y_1). Their domains are equal only if y_0 == x_0 and y_1 == x_1,
// which the shapes cannot prove, so fuse emits a guarded choice: one fused
// kernel (assuming the conditions) when they hold at run time, the two
// separate kernels otherwise.

// CHECK-LABEL: func.func @two_norms(
// CHECK-NEXT:    %sx, %sy = tensor.choice [y_0 == x_0, y_1 == x_1] {dvm.shapes = [#dvm.shape<x_0>, #dvm.shape<y_0>]} -> (tensor<?xf32>, tensor<?xf32>) {
// CHECK-NEXT:      %sx_1, %sy_1 = tensor.fusion vector (%x, %y) {dvm.domain = #dvm.shape<x_0, x_1>, dvm.reduced = [1 : i64], dvm.assume = [#dvm.cond<y_0 == x_0>, #dvm.cond<y_1 == x_1>], dvm.shapes = [#dvm.shape<x_0>, #dvm.shape<y_0>]}
// CHECK-NEXT:      ^bb0(%x_1: tensor<?x?xf32>, %y_1: tensor<?x?xf32>):
// CHECK-NEXT:        %x2 = tensor.mul %x_1, %x_1
// CHECK-NEXT:        %sx_2 = tensor.reduce_sum %x2
// CHECK-NEXT:        %y2 = tensor.mul %y_1, %y_1
// CHECK-NEXT:        %sy_2 = tensor.reduce_sum %y2
// CHECK-NEXT:        tensor.yield %sx_2, %sy_2
// CHECK-NEXT:      }
// CHECK-NEXT:      tensor.yield %sx_1, %sy_1
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %sx_2 = tensor.fusion vector (%x) {dvm.domain = #dvm.shape<x_0, x_1>, dvm.reduced = [1 : i64], dvm.shape = #dvm.shape<x_0>}
// CHECK-NEXT:      ^bb0(%x_1: tensor<?x?xf32>):
// CHECK-NEXT:        %x2 = tensor.mul %x_1, %x_1
// CHECK-NEXT:        %sx_3 = tensor.reduce_sum %x2
// CHECK-NEXT:        tensor.yield %sx_3
// CHECK-NEXT:      }
// CHECK-NEXT:      %sy_2 = tensor.fusion vector (%y) {dvm.domain = #dvm.shape<y_0, y_1>, dvm.reduced = [1 : i64], dvm.shape = #dvm.shape<y_0>}
// CHECK-NEXT:      ^bb0(%y_1: tensor<?x?xf32>):
// CHECK-NEXT:        %y2 = tensor.mul %y_1, %y_1
// CHECK-NEXT:        %sy_3 = tensor.reduce_sum %y2
// CHECK-NEXT:        tensor.yield %sy_3
// CHECK-NEXT:      }
// CHECK-NEXT:      tensor.yield %sx_2, %sy_2
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %sx, %sy

// kinds=vector keeps the choice (both parts are vector kernels) ...
// VECTOR-LABEL: func.func @two_norms(
// VECTOR-NEXT:    %sx, %sy = tensor.choice [y_0 == x_0, y_1 == x_1]

// ... but with max-ops=3 the fused kernel (4 ops) is too big: no choice.
// MAXOPS-LABEL: func.func @two_norms(
// MAXOPS-NOT:     tensor.choice
// MAXOPS:         %sx = tensor.fusion vector (%x)
// MAXOPS-NOT:     tensor.choice
// MAXOPS:         %sy = tensor.fusion vector (%y)
func.func @two_norms(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %x2 = tensor.mul %x, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %sx = tensor.reduce_sum %x2 {axes = [1]} : tensor<?x?xf32> -> tensor<?xf32>
  %y2 = tensor.mul %y, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %sy = tensor.reduce_sum %y2 {axes = [1]} : tensor<?x?xf32> -> tensor<?xf32>
  func.return %sx, %sy : tensor<?xf32>, tensor<?xf32>
}

// -----

// A guard over a product: the gt broadcasts %m's columns (m_1) against the
// flattened %m (m_0*m_1), which holds only under the guard m_1 == m_0*m_1; the
// select then unifies m_1 with a_0. The guards are facts in the unified
// symbols the shapes use (a_0 == a_0*m_0), so the three ops are one kernel.

// CHECK-LABEL: func.func @product_guard(
// CHECK:         dvm.unified = {{{.*}}m_1 = #dvm.expr<a_0>}
// CHECK-NEXT:    %y = tensor.fusion vector (%m, %a, %b) {dvm.domain = #dvm.shape<m_0, a_0>
// CHECK:           %flat = tensor.collapse_shape {{.*}} {dvm.shape = #dvm.shape<a_0*m_0>}
// CHECK-NEXT:      %c = tensor.gt
// CHECK-NEXT:      %y_1 = tensor.select
// CHECK-NEXT:      tensor.yield %y_1
func.func @product_guard(%a: tensor<?xf32>, %m: tensor<?x?xi32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %flat = tensor.collapse_shape %m [[0, 1]] : tensor<?x?xi32> into tensor<?xi32>
  %c = tensor.gt %m, %flat : (tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x?xi1>
  %y = tensor.select %c, %a, %b : (tensor<?x?xi1>, tensor<?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// fuse erases the ops whose results nothing reads, and the constants that
// nothing uses once the kernels copied theirs in: the unused %d would join the
// kernel of its sibling, which would compute it for nothing (a reduction there
// once for every tile of the grid).

// CHECK-LABEL: func.func @unused(
// CHECK-NEXT:    %y = tensor.fusion vector (%x)
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x?xf32>):
// CHECK-NEXT:      %y_1 = tensor.exp %x_1
// CHECK-NEXT:      tensor.yield %y_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y
func.func @unused(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %three = arith.constant dense<3.0> : tensor<f32>
  %d = tensor.mul %x, %two : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %p = tensor.reduce_prod %d {axes = [0, 1]} : tensor<?x?xf32> -> tensor<f32>
  %y = tensor.exp %x : tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

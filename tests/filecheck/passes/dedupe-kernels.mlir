// The dedupe-kernels pass: kernels that differ only in their names become
// one, the first of them, and every launch of the others launches it. It
// works on `tile.kernel` and on `bytecode.program` alike; `dvm-pipeline`
// runs it between the two.
//
// RUN: dvm-opt %s --split-input-file -p symbolic-shapes,fuse,stack,convert-tensor-to-tile,dedupe-kernels | filecheck %s
// RUN: dvm-opt %s --split-input-file -p symbolic-shapes,fuse,stack,convert-tensor-to-tile,convert-tile-to-bytecode,dedupe-kernels | filecheck %s --check-prefix=BC
// RUN: dvm-opt %s --split-input-file -p dvm-pipeline | filecheck %s --check-prefix=BC

// The q, k and v projections of attention are one kernel launched three
// times, each launch on its own weights.

// CHECK-LABEL: func.func @qkv(
// CHECK:         tile.launch @qkv_k0(%x, %wq, %bq)
// CHECK-NEXT:    tile.launch @qkv_k0(%x, %wk, %bk)
// CHECK-NEXT:    tile.launch @qkv_k0(%x, %wv, %bv)
// CHECK:       tile.kernel @qkv_k0 mix
// CHECK-NOT:   tile.kernel

// BC-LABEL: func.func @qkv(
// BC:         tile.launch @qkv_k0(%x, %wq, %bq)
// BC-NEXT:    tile.launch @qkv_k0(%x, %wk, %bk)
// BC-NEXT:    tile.launch @qkv_k0(%x, %wv, %bv)
// BC:       bytecode.program @qkv_k0
// BC-NOT:   bytecode.program
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

// Kernels that differ in a constant, in an op or in a static dim stay apart.

// CHECK-LABEL: func.func @different(
// CHECK:         tile.launch @different_k0(%x, %wa)
// CHECK-NEXT:    tile.launch @different_k1(%x, %wb)
// CHECK-NEXT:    tile.launch @different_k2(%x, %wc)
// CHECK-NEXT:    tile.launch @different_k3(%x, %wd)
// CHECK-COUNT-4: tile.kernel @different_k

// BC-LABEL: func.func @different(
// BC-COUNT-4: bytecode.program @different_k
func.func @different(%x: tensor<?x64xf32>, %wa: tensor<64x64xf32>, %wb: tensor<64x64xf32>, %wc: tensor<64x64xf32>, %wd: tensor<64x32xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x32xf32>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %a0 = tensor.matmul %x, %wa : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %a = tensor.add %a0, %one : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %b0 = tensor.matmul %x, %wb : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %b = tensor.add %b0, %two : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %c0 = tensor.matmul %x, %wc : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %c = tensor.mul %c0, %two : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %d0 = tensor.matmul %x, %wd : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  %d = tensor.add %d0, %two : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  func.return %a, %b, %c, %d : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x32xf32>
}

// -----

// Both variants of a streaming-fusion choice are deduplicated, and launches
// inside the choice's regions follow: the two residual LayerNorms of a
// transformer block are one kernel per variant (rows of a dynamic length,
// which may or may not fit a tile; the same weights make their sizes one).
// The matmul and the second LayerNorm are one kernel when the rows have at
// most 512 elements; apart, the second LayerNorm launches the first's kernels.

// CHECK-LABEL: func.func @two_norms(
// CHECK:         tensor.choice
// CHECK:           tile.launch @two_norms_k0_rows(%r1, %g1, %b1)
// CHECK:           tile.launch @two_norms_k0(%r1, %g1, %b1)
// CHECK:         tensor.choice [r1_1 <= 512]
// CHECK:             tile.launch @two_norms_k1_whole_k(%h1, %w, %g1, %b1)
// CHECK:             tile.launch @two_norms_k1(%h1, %w, %g1, %b1)
// CHECK:         } else {
// CHECK:             tile.launch @two_norms_k2_whole_k(%h1, %w)
// CHECK:             tile.launch @two_norms_k2(%h1, %w)
// CHECK:             tile.launch @two_norms_k0_rows(%r2, %g1, %b1)
// CHECK:             tile.launch @two_norms_k0(%r2, %g1, %b1)
// CHECK:       tile.kernel @two_norms_k0 vector
// CHECK:       tile.kernel @two_norms_k0_rows vector
// CHECK:       tile.kernel @two_norms_k1 mix
// CHECK:       tile.kernel @two_norms_k1_whole_k mix
// CHECK:       tile.kernel @two_norms_k2 cube
// CHECK:       tile.kernel @two_norms_k2_whole_k cube
// CHECK-NOT:   tile.kernel

// BC-LABEL: func.func @two_norms(
// BC:       bytecode.program @two_norms_k0 params
// BC:       bytecode.program @two_norms_k0_rows params
// BC:       bytecode.program @two_norms_k1 params
// BC:       bytecode.program @two_norms_k1_whole_k params
// BC:       bytecode.program @two_norms_k2 params
// BC:       bytecode.program @two_norms_k2_whole_k params
// BC-NOT:   bytecode.program
func.func @two_norms(%r1: tensor<?x?xf32>, %w: tensor<?x?xf32>, %g1: tensor<?xf32>, %b1: tensor<?xf32>) -> tensor<?x?xf32> {
  %m1 = tensor.reduce_sum %r1 {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %c1 = tensor.sub %r1, %m1 : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %s1 = tensor.mul %c1, %g1 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %h1 = tensor.add %s1, %b1 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %r2 = tensor.matmul %h1, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %m2 = tensor.reduce_sum %r2 {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %c2 = tensor.sub %r2, %m2 : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %s2 = tensor.mul %c2, %g1 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %h2 = tensor.add %s2, %b1 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %h2 : tensor<?x?xf32>
}

// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s

// A rotary embedding: rotate_half as concat(-x2, x1) of two slices of %x, and
// the angles duplicated by a concat, their sin and cos computed in the
// program. The elementwise ops after each concat move into its inputs (the
// concat of the angles splits cos and sin; the two concats, of the same parts,
// split the products and their sum, %x sliced along the way), so one concat
// ends the program, and it fuses with everything that computes its two
// halves: one kernel, reading %x through four slices (views).

func.func @rope(%x: tensor<?x?xf32>, %pos: tensor<?x1xf32>, %inv: tensor<1x?xf32>)
    -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %h = tensor.dim %inv, %c1 : tensor<1x?xf32>
  %angle = tensor.mul %pos, %inv : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  %angles = tensor.concat dim(1) %angle, %angle
      : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %cos = tensor.cos %angles : tensor<?x?xf32>
  %sin = tensor.sin %angles : tensor<?x?xf32>
  %x1 = tensor.extract_slice %x[0, 0] [%n, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %x2 = tensor.extract_slice %x[0, %h] [%n, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %neg = tensor.neg %x2 : tensor<?x?xf32>
  %rotated = tensor.concat dim(1) %neg, %x1 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %a = tensor.mul %x, %cos : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %b = tensor.mul %rotated, %sin : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %out = tensor.add %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %out : tensor<?x?xf32>
}

// CHECK:      %out = tensor.fusion vector (%pos, %inv, %x, {{.*}}) {dvm.domain = #dvm.shape<x_0, 2*inv_1>, dvm.reduced = [1 : i64]
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   %angle = tensor.mul
// CHECK-NEXT:   tensor.cos %angle
// CHECK-NEXT:   tensor.cos %angle
// CHECK-NEXT:   tensor.sin %angle
// CHECK-NEXT:   tensor.sin %angle
// CHECK:        tensor.neg
// CHECK:        tensor.add
// CHECK-NEXT:   tensor.add
// CHECK-NEXT:   tensor.concat dim(1)
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

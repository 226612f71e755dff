// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s

// A rotary embedding: rotate_half as concat(-x2, x1) of two slices of %x, and
// the angles duplicated by a concat, their sin and cos computed in the
// program. A concat is a kernel of its own, and so is each value it reads
// (a slice read by a concat is copied); the products and their sum fuse with
// sin and cos into one kernel that reads %x whole and both concats.

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

// CHECK:      %angle = tensor.fusion vector (%pos, %inv)
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.mul
// CHECK-NEXT:   tensor.yield
// CHECK:      %angles = tensor.fusion vector (%angle)
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.concat dim(1) {{.*}}dvm.shape = #dvm.shape<x_0, 2*inv_1>
// CHECK-NEXT:   tensor.yield
// CHECK:      %x1 = tensor.fusion vector (%x, %n, %h)
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.extract_slice
// CHECK-NEXT:   tensor.yield
// CHECK:      %neg = tensor.fusion vector (%x, %h, %n)
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.extract_slice {{.*}}dvm.slice = [#dvm.shape<0, inv_1>, #dvm.shape<1, 1>]
// CHECK-NEXT:   tensor.neg
// CHECK-NEXT:   tensor.yield
// CHECK:      %rotated = tensor.fusion vector (%neg, %x1)
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.concat dim(1)
// CHECK-NEXT:   tensor.yield
// CHECK:      %out = tensor.fusion vector (%angles, %x, %rotated)
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.cos
// CHECK-NEXT:   tensor.sin
// CHECK-NEXT:   tensor.mul
// CHECK-NEXT:   tensor.mul
// CHECK-NEXT:   tensor.add
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

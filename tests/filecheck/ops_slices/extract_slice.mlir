// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s
// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND

// Two slices of one input, sized by its dims, and their difference: one
// vector kernel; each slice is a view of the input (its offsets and strides
// recorded in `dvm.slice`), so nothing is copied.

func.func @halves(%t: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = tensor.dim %t, %c0 : tensor<?x?xf32>
  %w = tensor.dim %t, %c1 : tensor<?x?xf32>
  %h = arith.floordivsi %w, %c2 : index
  %r1 = arith.subi %r, %c1 : index
  %a = tensor.extract_slice %t[0, 0] [%r1, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %b = tensor.extract_slice %t[1, %h] [%r1, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %s = tensor.sub %b, %a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}

// CHECK:      tensor.fusion vector
// CHECK:        tensor.extract_slice {{.*}}[0, 0] [%{{.*}}, %{{.*}}] [1, 1] {{.*}}dvm.slice = [#dvm.shape<0, 0>, #dvm.shape<1, 1>]
// CHECK-NEXT:   tensor.extract_slice {{.*}}[1, %{{.*}}] [%{{.*}}, %{{.*}}] [1, 1] {{.*}}dvm.slice = [#dvm.shape<1, floor(t_1/2)>, #dvm.shape<1, 1>]
// CHECK-NEXT:   tensor.sub
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

// ROUND: %a = tensor.extract_slice %t [0, 0] [%r1, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
// ROUND: %b = tensor.extract_slice %t [1, %h] [%r1, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>

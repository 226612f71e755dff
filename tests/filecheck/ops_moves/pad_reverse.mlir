// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s
// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND

// A constant pad is a kernel of its own, holding its constant (moved into
// its region); a reverse of an input is a view that fuses with its reader.

func.func @pad(%t: tensor<?x?xf32>, %l: index) -> tensor<?x?xf32> {
  %cst = arith.constant 0.0 : f32
  %r = tensor.pad %t low[1, %l] high[2, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<?x?xf32> to tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @pad
// CHECK:         %r = tensor.fusion vector (%t, %l) {{.*}}dvm.shape = #dvm.shape<t_0 + 3, l + t_1>
// CHECK:           tensor.pad {{.*}} low[1, %{{.*}}] high[2, 0] {
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        tensor.yield %cst : f32
// CHECK-NEXT:      } {{.*}}dvm.slice = [#dvm.shape<1, l>, #dvm.shape<1, 1>]

func.func @flip_add(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = tensor.reverse %x {axes = [1]} : tensor<?x?xf32>
  %s = tensor.add %r, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @flip_add
// CHECK:         tensor.fusion vector (%x, %y)
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:      tensor.reverse
// CHECK-NEXT:      tensor.add
// CHECK-NEXT:      tensor.yield
// CHECK-NOT:     tensor.fusion

// ROUND: tensor.pad %t low[1, %l] high[2, 0] {
// ROUND: %r = tensor.reverse %x {axes = [1 : i64]} : tensor<?x?xf32>

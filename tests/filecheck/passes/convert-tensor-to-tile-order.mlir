// convert-tensor-to-tile orders each vector or mix fusion's ops before it sizes the
// tiles (`lowering/schedule.py`): an elementwise op, with the ops that feed only
// it, moves down to just before its first user where that holds fewer tiles at
// once. Tiles are sized by the bytes live per element: on ascend910b, 85% of
// 192 KiB over 12 bytes (three f32 tiles) is 13926 elements, over 16 bytes 10444.
// RUN: dvm-opt %s --split-input-file -p 'symbolic-shapes,fuse,stack,convert-tensor-to-tile{device=ascend910b}' | filecheck %s

// GELU as torch writes it: 0.5 * x first, held beside the whole chain.
func.func @gelu(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %half = arith.constant dense<5.000000e-01> : tensor<f32>
  %a = arith.constant dense<4.471500e-02> : tensor<f32>
  %k = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.000000e+00> : tensor<f32>
  %h = tensor.mul %x, %half : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %x1 = tensor.mul %x, %a : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %x2 = tensor.mul %x1, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %x3 = tensor.mul %x2, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tensor.add %x, %x3 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %m = tensor.mul %s, %k : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %t = tensor.tanh %m : tensor<?x?xf32>
  %p = tensor.add %t, %one : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %y = tensor.mul %h, %p : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// CHECK-LABEL: tile.kernel @gelu_k0
// CHECK-SAME:    Min(13926,
// CHECK:         %x1 = tile.mul %x_1, %a
// CHECK:         %p = tile.add %t, %one
// CHECK-NEXT:    %half = tile.constant 5.000000e-01
// CHECK-NEXT:    %h = tile.mul %x_1, %half
// CHECK-NEXT:    %y_1 = tile.mul %h, %p

// -----

// A chain made early for a late user: both of its ops move, the last first.
func.func @chain(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = arith.constant dense<2.000000e+00> : tensor<f32>
  %a = tensor.mul %x, %c : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %b = tensor.exp %a : tensor<?x?xf32>
  %y1 = tensor.mul %y, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %y2 = tensor.add %y1, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %y3 = tensor.mul %y2, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = tensor.add %b, %y3 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// CHECK-LABEL: tile.kernel @chain_k0
// CHECK-SAME:    Min(13926,
// CHECK:         %y3 = tile.mul %y2, %y_1
// CHECK-NEXT:    %x_1 = tile.load %x
// CHECK-NEXT:    %c = tile.constant
// CHECK-NEXT:    %a = tile.mul %x_1, %c
// CHECK-NEXT:    %b = tile.exp %a
// CHECK-NEXT:    %r_1 = tile.add %b, %y3

// -----

// Moving %s down to its user holds no fewer tiles: it stays.
func.func @stays(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>, %z: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = tensor.add %x, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %t = tensor.mul %z, %z : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %u = tensor.exp %t : tensor<?x?xf32>
  %r = tensor.add %s, %u : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// CHECK-LABEL: tile.kernel @stays_k0
// CHECK-SAME:    Min(13926,
// CHECK:         %s = tile.add %x_1, %y_1
// CHECK-NEXT:    %z_1 = tile.load %z

// -----

// A matmul's epilogue (a mix kernel) in torch's order: its output tiles are
// counted from the live bytes too, so a tile holds more rows (289, not 196).
func.func @addmm_gelu(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %half = arith.constant dense<0.5> : tensor<f32>
  %a = arith.constant dense<0.044715> : tensor<f32>
  %k = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %mm = tensor.matmul %x, %w : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %z = tensor.add %mm, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %h = tensor.mul %z, %half : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %z2 = tensor.mul %z, %z : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %z3 = tensor.mul %z, %z2 : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %t0 = tensor.mul %z3, %a : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %t1 = tensor.add %z, %t0 : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %t2 = tensor.mul %t1, %k : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %t3 = tensor.tanh %t2 : tensor<?x64xf32>
  %t4 = tensor.add %t3, %one : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %y = tensor.mul %h, %t4 : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}

// CHECK-LABEL: tile.kernel @addmm_gelu_k0 mix
// CHECK-SAME:    ceiling(x_0/289)
// CHECK:         %t4 = tile.add %t3, %one
// CHECK-NEXT:    %half = tile.constant 5.000000e-01
// CHECK-NEXT:    %h = tile.mul %z, %half
// CHECK-NEXT:    %y_1 = tile.mul %h, %t4

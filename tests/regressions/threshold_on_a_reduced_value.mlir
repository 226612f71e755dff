// A branch on a float read out of a reduction: dvm.compile failed with
// "arith.cmpf cannot run on the host (it should be inside a kernel)". Fixed in
// dvm/host.py: the host runs every arith op on scalars as dvm.interpret
// does (here in f32: the square is rounded to f32 before the comparison).
// shapes: 1x1
// shapes: 3x4
// shapes: 2x1
// shapes: 40x33
// seed: 1
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %peak = tensor.reduce_max %x {axes = [0, 1]} : tensor<?x?xf32> -> tensor<f32>
  %v = tensor.extract %peak[] : tensor<f32>
  %square = arith.mulf %v, %v : f32
  %limit = arith.constant 1.5 : f32
  %big = arith.cmpf ogt, %square, %limit : f32
  %y = scf.if %big -> (tensor<?x?xf32>) {
    %half = arith.constant dense<0.5> : tensor<f32>
    %scaled = tensor.mul %x, %half : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
    scf.yield %scaled : tensor<?x?xf32>
  } else {
    %t = tensor.tanh %x : tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  }
  func.return %y : tensor<?x?xf32>
}

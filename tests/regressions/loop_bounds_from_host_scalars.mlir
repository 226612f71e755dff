// Loop bounds computed on the host: half a dim (arith.divsi) and a count read
// out of a tensor (tensor.extract, arith.index_cast, arith.maxsi), and a
// while loop steered by arith.cmpf on a sum. dvm.compile rejected
// arith.index_cast and arith.cmpf ("cannot run on the host"). Fixed in
// dvm/host.py: the host runs every arith op on scalars.
// shapes: 1x4 scalar
// shapes: 5x4 scalar
// shapes: 8x4 scalar
// shapes: 2x4 scalar
// seed: 1
func.func @main(%x: tensor<?x4xf32>, %k: tensor<i32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %half = arith.divsi %n, %c2 : index
  %a = scf.for %i = %c0 to %half step %c1 iter_args(%acc = %x) -> (tensor<?x4xf32>) {
    %d = tensor.add %acc, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    scf.yield %d : tensor<?x4xf32>
  }
  %kv = tensor.extract %k[] : tensor<i32>
  %ki = arith.index_cast %kv : i32 to index
  %trips = arith.maxsi %ki, %c1 : index
  %b = scf.for %i = %c0 to %trips step %c1 iter_args(%acc = %x) -> (tensor<?x4xf32>) {
    %d = tensor.mul %acc, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    scf.yield %d : tensor<?x4xf32>
  }
  %quarter = arith.constant dense<0.25> : tensor<f32>
  %start = tensor.abs %x : tensor<?x4xf32>
  %positive = tensor.add %start, %quarter : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %c = scf.while (%w = %positive) : (tensor<?x4xf32>) -> tensor<?x4xf32> {
    %s = tensor.reduce_sum %w {axes = [0, 1]} : tensor<?x4xf32> -> tensor<f32>
    %sv = tensor.extract %s[] : tensor<f32>
    %limit = arith.constant 100.0 : f32
    %small = arith.cmpf olt, %sv, %limit : f32
    scf.condition(%small) %w : tensor<?x4xf32>
  } do {
  ^bb0(%w: tensor<?x4xf32>):
    %twice = tensor.add %w, %w : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    scf.yield %twice : tensor<?x4xf32>
  }
  func.return %a, %b, %c : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

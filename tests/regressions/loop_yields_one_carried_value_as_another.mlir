// Found by tests/test_random_programs.py (DVM_RANDOM_SEED=263, 2000
// programs): a wrong answer. The loop yields %acc4 as the next %acc5, but the
// runtime's scf.for assigned the yielded values to the carried ones one by
// one, so %acc5 took the %v7 just assigned to %acc4: -x instead of x. Fixed in
// dvm/host.py (op_ForOp): all yielded values are read before any is
// assigned (tests/test_runtime.py also swaps two carried values).
// shapes: 2
// shapes: 0
// shapes: 5
// seed: 0
// device: host
func.func @main(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  %c1 = arith.constant 0 : index
  %c2 = arith.constant 1 : index
  %c3 = arith.constant 1 : index
  %v8, %v9 = scf.for %iv6 = %c1 to %c2 step %c3 iter_args(%acc4 = %arg0, %acc5 = %arg0) -> (tensor<?xf32>, tensor<?xf32>) {
    %v7 = tensor.neg %arg0 : tensor<?xf32>
    scf.yield %v7, %acc4 : tensor<?xf32>, tensor<?xf32>
  }
  func.return %v9 : tensor<?xf32>
}

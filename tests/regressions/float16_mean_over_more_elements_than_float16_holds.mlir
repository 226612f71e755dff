// A float16 mean over a row of 65537 elements: the VM gave 0. The kernel divided
// the sum by the count as a float16 constant, and 65537 is above float16's
// largest number (65504): infinite. Fixed in passes/prefuse_folds.py
// (widen_half_reductions: the mean is taken in float32 and rounded once). Found through
// dvm.lazy's np.mean and torch's RMSNorm (`x.pow(2).mean(-1)`) of float16 rows.
// shapes: 1x65537
// shapes: 3x70001
// shapes: 2x5
// seed: 1
func.func @main(%x: tensor<?x?xf16>) -> tensor<?xf16> {
  %m = tensor.reduce_mean %x {axes = [1]} : tensor<?x?xf16> -> tensor<?xf16>
  func.return %m : tensor<?xf16>
}

// A float16 mean of squares over a long row: the VM gave inf where the mean is
// 1.5. The kernel summed the row chunk by chunk into a float16 running total,
// infinite once past 65504, though the mean fits. Fixed in
// passes/prefuse_folds.py (widen_half_reductions: a half-precision sum, mean or
// product is one of float32 between two converts, as the reference interpreter,
// numpy's mean and torch's are). Found through torch's RMSNorm
// (`x * rsqrt(x.pow(2).mean(-1) + eps)`) of float16 rows of 263167.
// shapes: 1x263167
// shapes: 2x5
// seed: 1
func.func @main(%x: tensor<?x?xf16>) -> (tensor<?xf16>, tensor<?xf16>) {
  %sq = tensor.mul %x, %x : (tensor<?x?xf16>, tensor<?x?xf16>) -> tensor<?x?xf16>
  %m = tensor.reduce_mean %sq {axes = [1]} : tensor<?x?xf16> -> tensor<?xf16>
  %s = tensor.reduce_sum %x {axes = [1]} : tensor<?x?xf16> -> tensor<?xf16>
  func.return %m, %s : tensor<?xf16>, tensor<?xf16>
}

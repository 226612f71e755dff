// A sequence-parallel LayerNorm (docs/distributed.md): each rank holds a partial sum
// of the whole sequence (what a row-parallel layer leaves); a reduce-scatter adds them
// and keeps the rank's rows, each rank normalizes its rows, and an all-gather puts the
// rows back together. In a world of one process it is the whole LayerNorm.
//   dvm-run --nproc 2 sp_layernorm.mlir --shapes 16x64 64 64 \
//       --shard partial replicate replicate --check
func.func @layernorm(%h: tensor<?x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
  %x = tensor.reduce_scatter %h {axis = 0, kind = "sum"} : tensor<?x?xf32> -> tensor<?x?xf32>
  %mean = tensor.reduce_mean %x {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %x, %mean : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %d2 = tensor.mul %d, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %var = tensor.reduce_mean %d2 {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %ve = tensor.add %var, %eps : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %r = tensor.rsqrt %ve : tensor<?x1xf32>
  %n = tensor.mul %d, %r : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %s = tensor.mul %n, %w : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %yr = tensor.add %s, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %y = tensor.all_gather %yr {axis = 0} : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

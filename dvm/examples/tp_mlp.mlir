// A tensor-parallel MLP (docs/distributed.md): the first layer's weight and bias are
// split by columns (each rank computes its part of the hidden units), the second
// layer's weight by rows (each rank's product is a partial sum), and one all-reduce
// adds the partial sums. In a world of one process it is the whole MLP.
//   dvm-run --nproc 2 tp_mlp.mlir --shapes 8x64 64x256 256 256x64 64 \
//       --shard replicate split:1 split:0 split:0 replicate --check
func.func @mlp(%x: tensor<?x?xf32>, %w1: tensor<?x?xf32>, %b1: tensor<?xf32>,
               %w2: tensor<?x?xf32>, %b2: tensor<?xf32>) -> tensor<?x?xf32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %h = tensor.matmul %x, %w1 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %hb = tensor.add %h, %b1 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %a = tensor.max %hb, %zero : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %p = tensor.matmul %a, %w2 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tensor.all_reduce %p {kind = "sum"} : tensor<?x?xf32> -> tensor<?x?xf32>
  %y = tensor.add %s, %b2 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

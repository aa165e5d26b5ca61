// MatMul's and Gemm's tiled variants (engine/ops/matmul.cc), listed first
// among their variants in gemm.cc, and the Gemm shape both files read.
#ifndef RECQ_ENGINE_OPS_MATMUL_H_
#define RECQ_ENGINE_OPS_MATMUL_H_

#include <vector>

#include "recq/op_registry.h"

namespace recq::internal {

// MatMulTiledVariant: batched Y = A * B with broadcast batches, each
// work-item computing a 4x8 block of Y (float8 rows of B, four rows of A);
// fits when N >= 8 and M >= 4 (edges are masked).
KernelVariant MatMulTiledVariant();

// MatMulPackedCpuVariant / GemmPackedCpuVariant: the CPU family's product
// with constant weights (matmul_packed.cl), B packed into panels of 8 or 16
// columns at lowering, 4 or 8 rows per work-item; MatMul absorbs the Add
// after it (bias or residual), Gemm applies C, alpha, beta and activation.
KernelVariant MatMulPackedCpuVariant();
KernelVariant GemmPackedCpuVariant();

// MatMulGemvCpuVariant / GemmGemvCpuVariant: the CPU family's
// matrix-vector product with constant weights (matmul_gemv_cpu.cl) for at
// most 4 rows (batches of A folded), B packed as matmul_packed packs it,
// one or two panels per item in small work-groups; the same epilogues as
// the packed variants. Listed before them.
KernelVariant MatMulGemvCpuVariant();
KernelVariant GemmGemvCpuVariant();

// MatMulLocalGpuVariants: the GPU family's batched Y = A * B in tiles staged
// in local memory (matmul_local.cl), 128x64, 128x128, 64x64 and 32x32 per
// work-group of 256 items, K split over work-groups when the tiles are too
// few to fill the device, an Add after it (bias [N] or residual) absorbed;
// listed before MatMulTiledVariant.
std::vector<KernelVariant> MatMulLocalGpuVariants();

// MatMulGemvGpuVariant: the GPU family's matrix-vector products (a decoder
// step's layers): at most 8 rows of A (batches folded) against one matrix
// B, K split over a work-group's items, an Add after it absorbed; listed
// first.
KernelVariant MatMulGemvGpuVariant();
// GemmGemvGpuVariant: the same for Gemm (A not transposed, B transposed
// only when constant) with C, alpha, beta and the fused activation, for at
// most 8 rows; listed first.
KernelVariant GemmGemvGpuVariant();

// GemmLocalGpuVariants: Gemm (A not transposed; B transposed only when
// constant) on the same kernel with C, alpha, beta and the fused activation,
// for 16 rows or more; listed before gemm_rowdot.
std::vector<KernelVariant> GemmLocalGpuVariants();

// MatMulMmaGpuVariant and GemmMmaGpuVariant: the GPU family's products on
// matrix units (matmul_mma.cl: tf32 tensor cores at fp32 accuracy through
// NVIDIA's inline PTX, or emulated where EngineOptions asks), 16 rows and
// columns or more, the same epilogues and split K as the local tiles;
// listed after the vector products and before the local tiles.
KernelVariant MatMulMmaGpuVariant();
KernelVariant GemmMmaGpuVariant();

// COf returns Gemm's C input (kNoValue when absent).
ValueId COf(const Node& node);

// What every Gemm kernel reads: M, N, K, and the strides (in elements) of C
// broadcast to [M, N] (0 along a dimension of size 1).
struct GemmShape {
  int64_t m, n, k, c_sm = 0, c_sn = 0;
};
GemmShape GemmShapeOf(const LoweringContext& ctx, const Node& node);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_MATMUL_H_

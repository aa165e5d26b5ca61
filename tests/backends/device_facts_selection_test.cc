// Kernel selection on made-up device facts: a convolution, a matrix product
// and a softmax lowered through the op registry's variant choice for a
// generic GPU, an Adreno, a Mali, a GPU with little local memory, the CPU
// family, and this device with the GPU family forced. Lowering needs no
// device; only the last cases read the real one (and the engine file's
// check that it was lowered for the same facts).
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/engine_file/archive.h"
#include "engine/engine_file/verifier.h"
#include "engine/engine_state.h"
#include "engine/lowering.h"
#include "gtest/gtest.h"
#include "recq/device_facts.h"
#include "recq/graph.h"
#include "recq/op_registry.h"
#include "recq/recq.h"
#include "testing/small_net.h"
#include "testing/test_env.h"

namespace recq::internal {
namespace {

using ::recq::testing::SharedContext;
using ::recq::testing::SmallNet;

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// A 3x3 convolution (64 to 128 channels over 28x28), a product of two
// computed 256x512 and 512x256 matrices, and a softmax over rows of 1000.
Graph ThreeNodes() {
  std::mt19937 rng(std::random_device{}());
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 64, 28, 28});
  TensorRef w = b.Constant("w", {128, 64, 3, 3}, Random(128 * 64 * 9, rng));
  Conv2DAttrs conv;
  conv.pads = {1, 1, 1, 1};
  b.Output(b.Conv2D(x, w, {}, conv), "conv");
  TensorRef a = b.Input("a", {256, 512});
  TensorRef m = b.Input("m", {512, 256});
  b.Output(b.AddNode(OpType::kMatMul, {a, m}), "matmul");
  TensorRef s = b.Input("s", {8, 1000});
  b.Output(b.Softmax(s), "softmax");
  absl::StatusOr<Graph> graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *std::move(graph) : Graph();
}

// Choices lowers `graph` for `facts` and returns each op's chosen variant,
// by op name (the default choice: the first variant that fits).
std::map<std::string, std::string> Choices(const Graph& graph, const DeviceFacts& facts) {
  std::map<std::string, std::string> chosen;
  LoweringTarget target;
  static_cast<DeviceFacts&>(target) = facts;
  target.choose_kernel = [&chosen](const Node& node, const LoweringContext&,
                                   absl::Span<const size_t> fitting) {
    chosen[OpTypeName(node.op)] = FindOp(node.op)->variants[fitting[0]].name;
    return KernelChoice{fitting[0], {}};
  };
  absl::StatusOr<Lowered> lowered = Lower(graph, target);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  return chosen;
}

// What a desktop GPU's facts look like to selection (the NVIDIA H100's
// limits); vendor-neutral.
DeviceFacts GenericGpu() {
  DeviceFacts f;
  f.kernel_family = KernelFamily::kGpu;
  f.max_work_group_size = 1024;
  f.compute_units = 132;
  f.local_mem_bytes = 49152;
  f.family = DeviceFamily::kOtherGpu;
  return f;
}

DeviceFacts Adreno740() {
  DeviceFacts f;
  f.kernel_family = KernelFamily::kGpu;
  f.max_work_group_size = 1024;
  f.compute_units = 6;
  f.local_mem_bytes = 32768;
  f.vendor = DeviceVendor::kQualcomm;
  f.family = DeviceFamily::kAdreno;
  f.adreno = {7, 740};
  f.subgroup_sizes = {64, 128};
  f.fp16 = true;
  f.images = true;
  return f;
}

DeviceFacts MaliG78() {
  DeviceFacts f;
  f.kernel_family = KernelFamily::kGpu;
  f.max_work_group_size = 512;
  f.compute_units = 20;
  f.local_mem_bytes = 32768;
  f.local_mem_is_global = true;  // Mali: CL_DEVICE_LOCAL_MEM_TYPE is CL_GLOBAL
  f.vendor = DeviceVendor::kArm;
  f.family = DeviceFamily::kMali;
  f.mali = {'G', 78, MaliArchitecture::kValhall};
  f.subgroup_sizes = {16};
  f.fp16 = true;
  f.images = true;
  return f;
}

bool StagesInLocalMemory(const std::string& variant) {
  return variant.find("igemm") != std::string::npos || variant.find("local") != std::string::npos;
}

TEST(DeviceFactsSelectionTest, GenericGpuStagesTilesInLocalMemory) {
  const Graph graph = ThreeNodes();
  std::map<std::string, std::string> gpu = Choices(graph, GenericGpu());
  ASSERT_EQ(gpu.size(), 3u);
  EXPECT_EQ(gpu["Conv2D"], "conv2d_igemm_gpu_128x64");
  EXPECT_EQ(gpu["MatMul"], "matmul_local_128x64");
  // The CPU family picks none of the GPU variants.
  std::map<std::string, std::string> cpu = Choices(graph, DeviceFacts{});
  for (const char* op : {"Conv2D", "MatMul", "Softmax"}) {
    EXPECT_NE(cpu[op], gpu[op]) << op;
    EXPECT_FALSE(StagesInLocalMemory(cpu[op])) << op << ": " << cpu[op];
  }
}

TEST(DeviceFactsSelectionTest, AdrenoChoosesAsAGenericGpu) {
  const Graph graph = ThreeNodes();
  EXPECT_EQ(Choices(graph, Adreno740()), Choices(graph, GenericGpu()));
}

TEST(DeviceFactsSelectionTest, MaliDoesNotStageThroughLocalMemory) {
  const Graph graph = ThreeNodes();
  std::map<std::string, std::string> gpu = Choices(graph, GenericGpu());
  std::map<std::string, std::string> mali = Choices(graph, MaliG78());
  ASSERT_EQ(mali.size(), 3u);
  EXPECT_EQ(mali["Conv2D"], "conv2d_direct_gpu");
  // Register tiles of 4x8 outputs per work-item, no local memory.
  EXPECT_EQ(mali["MatMul"], "matmul_tiled");
  EXPECT_NE(mali["MatMul"], gpu["MatMul"]);
  EXPECT_EQ(mali["Softmax"], gpu["Softmax"]);
}

TEST(DeviceFactsSelectionTest, TilesMustFitLocalMemory) {
  const Graph graph = ThreeNodes();
  DeviceFacts small = GenericGpu();
  // 128x64 tiles stage 16 x (132 + 64) floats (12.5 KiB), 64x64 ones 16 x
  // (68 + 64) (8.25 KiB), 32x32 ones 16 x (36 + 32) (4.25 KiB).
  small.local_mem_bytes = 8192;
  std::map<std::string, std::string> chosen = Choices(graph, small);
  EXPECT_EQ(chosen["MatMul"], "matmul_local_32x32");
  // Convolution tiles: 16 x (TM + TN) floats; 128x64 (12 KiB) does not
  // fit, 64x64 (8 KiB) does.
  EXPECT_EQ(chosen["Conv2D"], "conv2d_igemm_gpu_64x64");
}

// NVIDIA's driver at compute capability 9.0: the tensor-core variants
// where they are the default, the fp32 ones elsewhere; none without the
// compute capability.
DeviceFacts H100() {
  DeviceFacts f = GenericGpu();
  f.vendor = DeviceVendor::kNvidia;
  f.family = DeviceFamily::kNvidiaGpu;
  f.nvidia_compute_capability = 90;
  return f;
}

// One convolution of `c` to `oc` channels, `k` x `k`, over `hw` x `hw`.
Graph OneConv(int64_t c, int64_t oc, int64_t k, int64_t hw) {
  std::mt19937 rng(std::random_device{}());
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, c, hw, hw});
  TensorRef w = b.Constant("w", {oc, c, k, k}, Random(size_t(oc * c * k * k), rng));
  Conv2DAttrs conv;
  conv.pads = {k / 2, k / 2, k / 2, k / 2};
  b.Output(b.Conv2D(x, w, {}, conv), "y");
  absl::StatusOr<Graph> graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *std::move(graph) : Graph();
}

TEST(DeviceFactsSelectionTest, TensorCoresWhereTheyMeasuredFaster) {
  EXPECT_EQ(Choices(ThreeNodes(), H100())["MatMul"], "matmul_mma");
  // 3x3 layers of 64 or more output channels, channels innermost in K, on
  // matrix units (VGG-11's 64 to 128 at 112x112, ResNet-50's 64 to 64);
  // fewer output channels (DenseNet-121's 128 to 32) or input channels not
  // in whole steps of 16 (a stem's 3) on the fp32 tiles.
  EXPECT_EQ(Choices(OneConv(64, 128, 3, 112), H100())["Conv2D"], "conv2d_igemm_mma");
  EXPECT_EQ(Choices(OneConv(64, 64, 3, 56), H100())["Conv2D"], "conv2d_igemm_mma");
  EXPECT_EQ(Choices(OneConv(128, 32, 3, 28), H100())["Conv2D"], "conv2d_igemm_gpu_32x64");
  EXPECT_EQ(Choices(OneConv(3, 64, 3, 112), H100())["Conv2D"], "conv2d_igemm_gpu_64x64");
  // 1x1: 256 to 256 channels on matrix units, and 64 or more channels in
  // and out over 28x28 or more columns (ResNet-50's 64 to 64 at 56x56, 512
  // to 128 at 28x28); over fewer columns (14x14) or with fewer channels
  // (MobileNet V2's 32 to 192) on the pointwise kernel.
  EXPECT_EQ(Choices(OneConv(256, 256, 1, 14), H100())["Conv2D"], "conv2d_igemm_mma");
  EXPECT_EQ(Choices(OneConv(64, 64, 1, 56), H100())["Conv2D"], "conv2d_igemm_mma");
  EXPECT_EQ(Choices(OneConv(512, 128, 1, 28), H100())["Conv2D"], "conv2d_igemm_mma");
  EXPECT_EQ(Choices(OneConv(64, 64, 1, 14), H100())["Conv2D"], "conv2d_pointwise_gpu");
  EXPECT_EQ(Choices(OneConv(32, 192, 1, 28), H100())["Conv2D"], "conv2d_pointwise_gpu");
  DeviceFacts turing = H100();
  turing.nvidia_compute_capability = 75;
  EXPECT_EQ(Choices(ThreeNodes(), turing)["MatMul"], "matmul_local_128x64");
  EXPECT_EQ(Choices(OneConv(64, 128, 3, 112), turing)["Conv2D"], "conv2d_igemm_gpu_128x64");
}

// PoCL with the GPU family forced (EngineOptions::KernelTarget::kGpu)
// chooses as the generic GPU: a CPU's local memory is cached memory.
TEST(DeviceFactsSelectionTest, ThisDeviceWithTheGpuFamilyForced) {
  const Graph graph = ThreeNodes();
  const DeviceFacts forced =
      LoweringFactsFor(SharedContext().device_info(), EngineOptions::KernelTarget::kGpu);
  ASSERT_TRUE(forced.GpuKernels());
  if (forced.local_mem_bytes < 12800 || forced.max_work_group_size < 256) {
    GTEST_SKIP() << "this device's limits differ from the generic GPU's: " << forced.SelectionKey();
  }
  if (forced.family == DeviceFamily::kMali) GTEST_SKIP() << "a Mali device: see the Mali test";
  EXPECT_EQ(Choices(graph, forced), Choices(graph, GenericGpu()));
}

// An engine file stores the facts' SelectionKey and is reused as stored only
// where the loading device's key is equal; a file without the key compares
// the three facts older files stored.
TEST(DeviceFactsSelectionTest, EngineFilesCompareTheSelectionKey) {
  absl::StatusOr<Engine> engine = Engine::Compile(SharedContext(), SmallNet());
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<std::string> bytes = engine->Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<engine_file::EngineFile> file = ParseEngineFile(*bytes);
  ASSERT_TRUE(file.ok()) << file.status();
  const DeviceFacts here =
      LoweringFactsFor(SharedContext().device_info(), EngineOptions::KernelTarget::kAuto);
  EXPECT_EQ(file->built_for().selection_key(), here.SelectionKey());

  auto load = [&](const std::string& key) {
    engine_file::EngineFile edited = *file;
    edited.mutable_built_for()->set_selection_key(key);
    return LoadEngineFromBytes(SharedContext(), WrapEngineFilePayload(edited.SerializeAsString()));
  };
  absl::StatusOr<Engine> same = load(here.SelectionKey());
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->stats().origin, EngineOrigin::kFileAsStored) << same->stats().origin_reason;
  // The same three facts, another family: lowered afresh.
  DeviceFacts mali = here;
  mali.family = DeviceFamily::kMali;
  absl::StatusOr<Engine> other = load(mali.SelectionKey());
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->stats().origin, EngineOrigin::kFileRelowered);
  // No key: a file from before it.
  absl::StatusOr<Engine> old = load("");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->stats().origin, EngineOrigin::kFileAsStored) << old->stats().origin_reason;
}

}  // namespace
}  // namespace recq::internal

// A custom op, registered the way an application registers one (TensorRT
// plugins, onnxruntime custom ops): its ONNX name and domain, its shape
// function, its kernel source and its lowering, all through the public API
// (recq/op_registry.h). An ONNX model that uses it loads, compiles, records
// and matches a CPU reference registered for it.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "onnx/onnx_pb.h"
#include "recq/onnx.h"
#include "recq/op_registry.h"
#include "reference/reference_registry.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::Download;
using testing::NewTensor;
using testing::SharedContext;

// y = x * sigmoid(beta * x), ONNX "com.example:Swish" with a float attribute.
struct SwishAttrs {
  float beta = 1.0f;
};
const OpType kSwish("example.Swish");

constexpr const char* kSwishSource = R"(
__kernel void swish(__global const float* x, __global float* y, float beta) {
  const int i = get_global_id(0);
  y[i] = x[i] / (1.0f + exp(-beta * x[i]));
}
)";

absl::Status RegisterSwish() {
  static const absl::Status status = [] {
    absl::Status s = RegisterKernelSource("example_swish.cl", kSwishSource);
    if (!s.ok()) return s;
    OpDef def;
    def.type = kSwish;
    def.onnx = {{"com.example", "Swish", 1, 1, [](OnnxNodeContext& n) -> absl::Status {
                   if (absl::Status s = n.CheckAttrs({"beta"}); !s.ok()) return s;
                   absl::StatusOr<ValueId> x = n.Input(0);
                   if (!x.ok()) return x.status();
                   absl::StatusOr<float> beta = n.Float("beta", 1.0f);
                   if (!beta.ok()) return beta.status();
                   return n.Emit(kSwish, {*x}, SwishAttrs{*beta});
                 }}};
    def.infer = [](const OpAttrs& attrs, InferInputs in) -> absl::StatusOr<TensorDesc> {
      if (in.size() != 1 || in[0] == nullptr) {
        return absl::InvalidArgumentError("example.Swish takes one input");
      }
      if (attrs.get_if<SwishAttrs>() == nullptr) {
        return absl::InvalidArgumentError("example.Swish needs SwishAttrs");
      }
      return *in[0];
    };
    def.variants = {
        {"swish", nullptr, [](LoweringContext& ctx, const Node& node) {
           Dispatch d;
           d.kernel = ctx.Kernel("example_swish.cl", "swish");
           d.global = {size_t(ctx.graph().value(node.outputs[0]).desc.NumElements()), 1, 1};
           d.label = "swish";
           d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0]),
                     DispatchArg::Scalar(node.attrs.get_if<SwishAttrs>()->beta)};
           ctx.Emit(std::move(d));
           return absl::OkStatus();
         }}};
    s = RegisterOp(std::move(def));
    if (!s.ok()) return s;
    return reference::RegisterReferenceOp(
        kSwish,
        [](const Node& node,
           reference::ReferenceInputs in) -> absl::StatusOr<reference::HostTensor> {
          const float beta = node.attrs.get_if<SwishAttrs>()->beta;
          reference::HostTensor y = *in[0];
          for (float& v : y.data) v = float(double(v) / (1.0 + std::exp(-double(beta) * v)));
          return y;
        });
  }();
  return status;
}

// x -> Relu -> com.example:Swish(beta) -> y
std::string SwishModel(const std::string& domain_imported, float beta) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  onnx::OperatorSetIdProto* id = model.add_opset_import();
  id->set_domain("");
  id->set_version(13);
  if (!domain_imported.empty()) {
    id = model.add_opset_import();
    id->set_domain(domain_imported);
    id->set_version(1);
  }
  onnx::GraphProto* g = model.mutable_graph();
  auto info = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {2, 3, 8, 8}) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  info(g->add_input(), "x");
  info(g->add_output(), "y");
  onnx::NodeProto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->add_input("x");
  relu->add_output("r");
  onnx::NodeProto* swish = g->add_node();
  swish->set_op_type("Swish");
  swish->set_domain("com.example");
  swish->set_name("swish");
  swish->add_input("r");
  swish->add_output("y");
  onnx::AttributeProto* a = swish->add_attribute();
  a->set_name("beta");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(beta);
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

TEST(CustomOpTest, OnnxModelWithACustomOpMatchesItsReference) {
  RECQ_ASSERT_OK(RegisterSwish());
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, LoadOnnxFromBytes(SwishModel("com.example", 1.7f)));
  ASSERT_EQ(graph.nodes().size(), 2u);
  EXPECT_EQ(graph.nodes()[1].op, kSwish);
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), graph));
  EXPECT_EQ(engine.DispatchLabels().back(), "swish/swish");
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record());
  Tensor out = NewTensor(engine.outputs()[0].desc);
  for (uint64_t run = 0; run < 2; ++run) {
    auto host = reference::RandomTensor({2, 3, 8, 8}, 300 + run, -4.0f, 4.0f);
    Tensor in = NewTensor({host.shape}, host.data);
    RECQ_ASSERT_OK(out.Fill(NAN));
    Bindings b;
    b.Set("x", in);
    b.Set("y", out);
    RECQ_ASSERT_OK(rec.Run(b));
    // exp() in float: a few ulp.
    auto cmp = reference::Compare(Download(out), testing::ReferenceOutput(graph, "x", host, "y"),
                                  1e-6f, 1e-5f);
    EXPECT_TRUE(cmp.ok()) << "run " << run << ": " << cmp.ToString();
  }
}

TEST(CustomOpTest, ADomainTheModelDoesNotImportIsAClearError) {
  RECQ_ASSERT_OK(RegisterSwish());
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(SwishModel("", 1.0f));
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
  EXPECT_TRUE(absl::StrContains(g.status().message(), "com.example")) << g.status();
}

TEST(CustomOpTest, AnUnregisteredCustomOpNamesItsDomain) {
  std::string bytes = SwishModel("com.other", 1.0f);
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(bytes));
  model.mutable_graph()->mutable_node(1)->set_domain("com.other");
  model.SerializeToString(&bytes);
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(bytes);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << g.status();
  EXPECT_TRUE(absl::StrContains(g.status().message(), "com.other")) << g.status();
}

}  // namespace
}  // namespace recq

// ApplyPrePostProcessing: the graph rewrite behind recq/preprocess.h.
#include "recq/preprocess.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/ops/preprocess.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq {

const char* ColorFormatName(ColorFormat color) {
  switch (color) {
    case ColorFormat::kRGB:
      return "rgb";
    case ColorFormat::kBGR:
      return "bgr";
    case ColorFormat::kRGBX:
      return "rgbx";
    case ColorFormat::kBGRX:
      return "bgrx";
    case ColorFormat::kNv12TwoPlane:
      return "nv12";
    case ColorFormat::kNv12SinglePlane:
      return "nv12_1plane";
    case ColorFormat::kGray:
      return "gray";
  }
  return "?";
}

namespace {

using internal::PreprocessAttrs;

absl::Status BadInput(const std::string& name, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("preprocessing of input '", name, "': ", what));
}

// Resolve fills the defaults of `in` for the model input `model` and checks
// that the combination is one the kernel implements.
absl::StatusOr<PreprocessAttrs> Resolve(const std::string& name, InputPreprocess in,
                                        const TensorDesc& model) {
  const auto& m = model.shape;
  if (m.size() != 4 || (m[1] != 1 && m[1] != 3) || model.dtype == DataType::kFloat64 ||
      !IsFloatingPoint(model.dtype)) {
    return BadInput(name, absl::StrCat("the model input is ", model.ToString(),
                                       "; preprocessing needs [N, 1 or 3, H, W] of float32 or "
                                       "float16"));
  }
  const int64_t c = m[1];
  if (in.source_height == 0) in.source_height = m[2];
  if (in.source_width == 0) in.source_width = m[3];
  if (in.source_height <= 0 || in.source_width <= 0) {
    return BadInput(name, absl::StrCat("source size ", in.source_width, "x", in.source_height,
                                       " is not positive"));
  }
  const bool nv12 =
      in.color == ColorFormat::kNv12TwoPlane || in.color == ColorFormat::kNv12SinglePlane;
  const bool image = in.kind == MemoryKind::kImage2D;
  const DataType t = in.element_type;
  if (t != DataType::kUInt8 && t != DataType::kFloat16 && t != DataType::kFloat32) {
    return BadInput(name, absl::StrCat("element type ", DataTypeName(t),
                                       "; expected uint8, float16 or float32"));
  }
  if (image && t == DataType::kFloat16) {
    return BadInput(
        name, "an image2d source is uint8 (CL_UNORM_INT8) or float32 (CL_FLOAT), not float16");
  }
  if (nv12 && !image && t != DataType::kUInt8) {
    return BadInput(name, "an NV12 buffer holds uint8 samples");
  }
  if (nv12 && (in.source_height % 2 != 0 || in.source_width % 2 != 0)) {
    return BadInput(name, absl::StrCat("NV12 source size ", in.source_width, "x", in.source_height,
                                       " must be even"));
  }
  if (image) {
    if (m[0] != 1) {
      return BadInput(
          name, absl::StrCat("an image2d source holds one frame; the model's batch is ", m[0]));
    }
    if (in.color != ColorFormat::kRGBX && in.color != ColorFormat::kGray &&
        in.color != ColorFormat::kNv12TwoPlane) {
      return BadInput(name, absl::StrCat("colour ", ColorFormatName(in.color),
                                         " has no image2d form; images are rgbx (CL_RGBA or "
                                         "CL_BGRA: the runtime orders the channels), gray (CL_R) "
                                         "or nv12 (CL_R + CL_RG)"));
    }
  }
  if (in.color == ColorFormat::kNv12SinglePlane) {
    const int64_t y_bytes = in.source_height * in.source_width;
    if (in.uv_offset == 0) in.uv_offset = y_bytes;
    if (in.uv_offset < y_bytes) {
      return BadInput(name, absl::StrCat("uv_offset ", in.uv_offset, " is inside the Y plane of ",
                                         y_bytes, " bytes"));
    }
  } else if (in.uv_offset != 0) {
    return BadInput(name, "uv_offset applies to single-plane NV12 only");
  }
  if (c == 1) {
    if (in.color != ColorFormat::kGray) {
      return BadInput(name, "a 1-channel model input needs a gray source");
    }
    in.model_color = ColorFormat::kGray;
  } else if (in.model_color != ColorFormat::kRGB && in.model_color != ColorFormat::kBGR) {
    return BadInput(name, "the model's colour order is rgb or bgr for 3 channels");
  }
  for (std::vector<float>* v : {&in.mean, &in.scale}) {
    const char* what = v == &in.mean ? "mean" : "scale";
    if (v->empty()) v->assign(c, v == &in.mean ? 0.0f : 1.0f);
    if (v->size() == 1) v->assign(c, v->front());
    if (static_cast<int64_t>(v->size()) != c) {
      return BadInput(
          name, absl::StrCat(what, " has ", v->size(), " values; the model has ", c, " channels"));
    }
  }
  for (float s : in.scale) {
    if (s == 0.0f || !std::isfinite(s)) return BadInput(name, "a scale is zero or not finite");
  }
  const int64_t limit = int64_t{1} << 30;
  if (in.source_height * in.source_width >= limit / 4) {
    return BadInput(name, "source frames of 2^28 pixels or more are not supported");
  }
  return PreprocessAttrs{std::move(in), model};
}

std::string FreeName(const std::vector<Value>& values, const std::string& base) {
  auto taken = [&](const std::string& n) {
    return std::any_of(values.begin(), values.end(), [&](const Value& v) { return v.name == n; });
  };
  std::string name = base;
  for (int i = 1; taken(name); ++i) name = absl::StrCat(base, "_", i);
  return name;
}

std::string Names(const Graph& graph, const std::vector<ValueId>& ids) {
  std::vector<std::string> names;
  for (ValueId id : ids) names.push_back(absl::StrCat("'", graph.value(id).name, "'"));
  return absl::StrJoin(names, ", ");
}

}  // namespace

absl::Status ApplyPrePostProcessing(Graph& graph, const PrePostProcessing& ppp) {
  if (ppp.empty()) return absl::OkStatus();
  std::vector<Value> values = graph.values();
  std::vector<Node> nodes = graph.nodes();
  std::vector<ValueId> inputs = graph.inputs();
  std::vector<ValueId> outputs = graph.outputs();
  std::vector<Node> head;  // the Preprocess nodes, first in the list

  for (const auto& input : ppp.inputs) {
    // Named, not structured bindings: lambdas below capture them (C++17).
    const std::string& name = input.first;
    const auto& spec = input.second;
    auto it = std::find_if(inputs.begin(), inputs.end(),
                           [&](ValueId id) { return values[id].name == name; });
    if (it == inputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat("preprocessing names input '", name,
                                                     "'; the graph's inputs are ",
                                                     Names(graph, graph.inputs())));
    }
    const ValueId model_id = *it;
    RECQ_ASSIGN_OR_RETURN(PreprocessAttrs attrs, Resolve(name, spec, values[model_id].desc));
    // The model input becomes the Preprocess node's output; the sources
    // take the input's name (or NAME/y and NAME/uv).
    values[model_id].kind = Value::Kind::kIntermediate;
    values[model_id].name = FreeName(values, absl::StrCat(name, "/model"));
    const std::vector<TensorDesc> descs = internal::SourceDescs(attrs);
    std::vector<ValueId> sources;
    for (size_t i = 0; i < descs.size(); ++i) {
      Value v;
      v.name = descs.size() == 1 ? name : absl::StrCat(name, i == 0 ? "/y" : "/uv");
      if (std::any_of(values.begin(), values.end(),
                      [&](const Value& o) { return o.name == v.name; })) {
        return BadInput(name, absl::StrCat("the binding name '", v.name, "' is taken"));
      }
      v.desc = descs[i];
      v.kind = Value::Kind::kInput;
      sources.push_back(static_cast<ValueId>(values.size()));
      values.push_back(std::move(v));
    }
    it = inputs.erase(it);
    inputs.insert(it, sources.begin(), sources.end());
    Node node;
    node.op = internal::kPreprocess;
    node.name = absl::StrCat(name, "/preprocess");
    node.inputs = sources;
    node.outputs = {model_id};
    node.attrs = std::move(attrs);
    head.push_back(std::move(node));
  }

  for (const auto& output : ppp.outputs) {
    const std::string& name = output.first;
    const auto& spec = output.second;
    auto it = std::find_if(outputs.begin(), outputs.end(),
                           [&](ValueId id) { return values[id].name == name; });
    if (it == outputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat("postprocessing names output '", name,
                                                     "'; the graph's outputs are ",
                                                     Names(graph, graph.outputs())));
    }
    const TensorDesc model = values[*it].desc;
    if (model.dtype != DataType::kFloat32 && model.dtype != DataType::kFloat16) {
      return absl::InvalidArgumentError(absl::StrCat("postprocessing of output '", name,
                                                     "': it is ", model.ToString(),
                                                     "; only float outputs convert"));
    }
    if (spec.element_type != DataType::kFloat32 && spec.element_type != DataType::kFloat16) {
      return absl::InvalidArgumentError(
          absl::StrCat("postprocessing of output '", name, "': element type ",
                       DataTypeName(spec.element_type), "; expected float32 or float16"));
    }
    const bool transpose = spec.layout == TensorLayout::kNHWC;
    if (transpose && model.shape.size() != 4) {
      return absl::InvalidArgumentError(absl::StrCat("postprocessing of output '", name,
                                                     "': NHWC needs a 4-D output; it is ",
                                                     model.ToString()));
    }
    const bool cast = spec.element_type != model.dtype;
    if (!transpose && !cast) continue;
    ValueId current = *it;
    values[current].name = FreeName(values, absl::StrCat(name, "/model"));
    auto add = [&](OpType op, OpAttrs attrs, TensorDesc desc, const std::string& node_name,
                   const std::string& value_name) {
      Value v;
      v.name = value_name;
      v.desc = std::move(desc);
      v.kind = Value::Kind::kIntermediate;
      const ValueId id = static_cast<ValueId>(values.size());
      values.push_back(std::move(v));
      Node node;
      node.op = op;
      node.name = node_name;
      node.inputs = {current};
      node.outputs = {id};
      node.attrs = std::move(attrs);
      nodes.push_back(std::move(node));
      current = id;
    };
    TensorDesc desc = model;
    if (transpose) {
      desc.shape = {model.shape[0], model.shape[2], model.shape[3], model.shape[1]};
      add(OpType::kTranspose, TransposeAttrs{{0, 2, 3, 1}}, desc, absl::StrCat(name, "/to_nhwc"),
          cast ? FreeName(values, absl::StrCat(name, "/nhwc")) : name);
    }
    if (cast) {
      desc.dtype = spec.element_type;
      add(internal::kCast, internal::CastAttrs{spec.element_type}, desc,
          absl::StrCat(name, "/to_", DataTypeName(spec.element_type)), name);
    }
    *it = current;
  }

  head.insert(head.end(), std::make_move_iterator(nodes.begin()),
              std::make_move_iterator(nodes.end()));
  RECQ_ASSIGN_OR_RETURN(Graph rewritten, Graph::Create(std::move(values), std::move(head),
                                                       std::move(inputs), std::move(outputs)));
  graph = std::move(rewritten);
  return absl::OkStatus();
}

absl::StatusOr<InputPreprocess> ParseInputFormat(absl::string_view text) {
  InputPreprocess in;
  std::vector<absl::string_view> parts = absl::StrSplit(text, ',');
  absl::string_view head = parts[0];
  absl::string_view color = head, size;
  if (size_t colon = head.find(':'); colon != absl::string_view::npos) {
    color = head.substr(0, colon);
    size = head.substr(colon + 1);
  }
  bool known = false;
  for (ColorFormat c :
       {ColorFormat::kRGB, ColorFormat::kBGR, ColorFormat::kRGBX, ColorFormat::kBGRX,
        ColorFormat::kNv12TwoPlane, ColorFormat::kNv12SinglePlane, ColorFormat::kGray}) {
    if (color == ColorFormatName(c)) {
      in.color = c;
      known = true;
    }
  }
  if (!known) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input-format: unknown colour format '", color,
                     "'; expected rgb, bgr, rgbx, bgrx, gray, nv12 or nv12_1plane"));
  }
  if (!size.empty()) {
    std::vector<absl::string_view> wh = absl::StrSplit(size, 'x');
    if (wh.size() != 2 || !absl::SimpleAtoi(wh[0], &in.source_width) ||
        !absl::SimpleAtoi(wh[1], &in.source_height) || in.source_width <= 0 ||
        in.source_height <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-format: size '", size, "' is not WIDTHxHEIGHT (1280x720)"));
    }
  }
  auto floats = [](absl::string_view key, absl::string_view v,
                   std::vector<float>& out) -> absl::Status {
    out.clear();
    for (absl::string_view f : absl::StrSplit(v, '/')) {
      float x = 0;
      if (!absl::SimpleAtof(f, &x)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--input-format: ", key, " value '", f, "' is not a number (a/b/c)"));
      }
      out.push_back(x);
    }
    return absl::OkStatus();
  };
  for (size_t i = 1; i < parts.size(); ++i) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(parts[i], '=');
    const absl::string_view key = kv.first, v = kv.second;
    if (key == "type") {
      RECQ_ASSIGN_OR_RETURN(in.element_type, ParseDataType(v));
    } else if (key == "layout" && (v == "nhwc" || v == "nchw")) {
      in.layout = v == "nhwc" ? TensorLayout::kNHWC : TensorLayout::kNCHW;
    } else if (key == "mean") {
      RECQ_RETURN_IF_ERROR(floats(key, v, in.mean));
    } else if (key == "scale") {
      RECQ_RETURN_IF_ERROR(floats(key, v, in.scale));
    } else if (key == "model" && (v == "rgb" || v == "bgr")) {
      in.model_color = v == "rgb" ? ColorFormat::kRGB : ColorFormat::kBGR;
    } else if (key == "kind" && (v == "buffer" || v == "image")) {
      in.kind = v == "buffer" ? MemoryKind::kBuffer : MemoryKind::kImage2D;
    } else if (key == "uv_offset" && absl::SimpleAtoi(v, &in.uv_offset) && in.uv_offset >= 0) {
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input-format: '", parts[i],
          "' is not one of type=u8|f16|f32, layout=nhwc|nchw, mean=a/b/c, scale=a/b/c, "
          "model=rgb|bgr, kind=buffer|image, uv_offset=BYTES"));
    }
  }
  return in;
}

}  // namespace recq

#include "recq/shape_profile.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace recq {

std::vector<int64_t> DimProfile::Buckets() const {
  if (fixed()) return {min};
  std::vector<int64_t> out;
  switch (rule) {
    case Rule::kExact:
      return {};
    case Rule::kPow2:
      for (int64_t p = 1; p < max; p *= 2) {
        if (p >= min) out.push_back(p);
      }
      break;
    case Rule::kMultiple:
      for (int64_t m = multiple; m < max; m += multiple) {
        if (m >= min) out.push_back(m);
      }
      break;
    case Rule::kList:
      return buckets;
  }
  out.push_back(max);
  return out;
}

int64_t DimProfile::BucketFor(int64_t size) const {
  if (size < min || size > max) return -1;
  if (rule == Rule::kExact) return size;
  for (int64_t b : Buckets()) {
    if (b >= size) return b;
  }
  return -1;
}

std::string DimProfile::ToString() const {
  if (fixed()) return absl::StrCat(min);
  switch (rule) {
    case Rule::kExact:
      return absl::StrCat(min, "..", max);
    case Rule::kPow2:
      return absl::StrCat(min, "..", max, "/pow2");
    case Rule::kMultiple:
      return absl::StrCat(min, "..", max, "/mul", multiple);
    case Rule::kList:
      return absl::StrCat("{", absl::StrJoin(buckets, ","), "}");
  }
  return "?";
}

std::string InputProfileToString(const InputProfile& profile) {
  return absl::StrJoin(profile, "x",
                       [](std::string* out, const DimProfile& d) { out->append(d.ToString()); });
}

bool IsFixed(const ShapeProfiles& profiles) {
  for (const auto& [name, dims] : profiles) {
    for (const DimProfile& d : dims) {
      if (!d.fixed()) return false;
    }
  }
  return true;
}

namespace {

constexpr char kSyntax[] =
    "expected NAME:DIMxDIM... where DIM is N, MIN..MAX, MIN..MAX/pow2, MIN..MAX/mulN or "
    "{B1,B2,...}, e.g. input_ids:1x1..512/pow2";

// SplitOutsideBraces splits `text` at commas that are not inside {...}.
std::vector<absl::string_view> SplitOutsideBraces(absl::string_view text) {
  std::vector<absl::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '{') ++depth;
    if (i < text.size() && text[i] == '}') --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      if (i > start) parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

bool PositiveInt(absl::string_view s, int64_t* v) { return absl::SimpleAtoi(s, v) && *v > 0; }

// ParseDim reads one dimension; the error says what is wrong with it.
absl::StatusOr<DimProfile> ParseDim(absl::string_view d) {
  DimProfile dim;
  if (absl::ConsumePrefix(&d, "{")) {
    if (!absl::ConsumeSuffix(&d, "}")) return absl::InvalidArgumentError("'{' without '}'");
    for (absl::string_view b : absl::StrSplit(d, ',')) {
      int64_t v = 0;
      if (!PositiveInt(b, &v)) {
        return absl::InvalidArgumentError(absl::StrCat("bucket '", b, "' is not a positive size"));
      }
      if (!dim.buckets.empty() && v <= dim.buckets.back()) {
        return absl::InvalidArgumentError("buckets must be listed in increasing order");
      }
      dim.buckets.push_back(v);
    }
    dim.rule = DimProfile::Rule::kList;
    dim.min = 1;
    dim.max = dim.buckets.back();
    if (dim.buckets.size() == 1) dim = DimProfile::Fixed(dim.max);
    return dim;
  }
  const size_t dots = d.find("..");
  if (dots == absl::string_view::npos) {
    int64_t v = 0;
    if (!PositiveInt(d, &v)) return absl::InvalidArgumentError("not a positive size");
    return DimProfile::Fixed(v);
  }
  absl::string_view lo = d.substr(0, dots);
  absl::string_view hi = d.substr(dots + 2);
  absl::string_view rule;
  if (const size_t slash = hi.find('/'); slash != absl::string_view::npos) {
    rule = hi.substr(slash + 1);
    hi = hi.substr(0, slash);
  }
  if (!PositiveInt(lo, &dim.min)) {
    return absl::InvalidArgumentError(absl::StrCat("minimum '", lo, "' is not a positive size"));
  }
  if (!PositiveInt(hi, &dim.max)) {
    return absl::InvalidArgumentError(absl::StrCat("maximum '", hi, "' is not a positive size"));
  }
  if (dim.min > dim.max) {
    return absl::InvalidArgumentError(
        absl::StrCat("minimum ", dim.min, " is above maximum ", dim.max));
  }
  if (rule.empty() && d.find('/') == absl::string_view::npos) {
    dim.rule = DimProfile::Rule::kExact;
  } else if (rule == "pow2") {
    dim.rule = DimProfile::Rule::kPow2;
  } else if (absl::ConsumePrefix(&rule, "mul") && PositiveInt(rule, &dim.multiple)) {
    dim.rule = DimProfile::Rule::kMultiple;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown bucket rule '/", rule, "' (expected /pow2 or /mulN)"));
  }
  return dim;
}

}  // namespace

absl::StatusOr<ShapeProfiles> ParseShapeProfiles(absl::string_view text) {
  ShapeProfiles profiles;
  for (absl::string_view part : SplitOutsideBraces(text)) {
    const size_t colon = part.rfind(':');
    const auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad shape '", part, "': ", why, "; ", kSyntax));
    };
    if (colon == absl::string_view::npos || colon == 0) return bad("no input name");
    const std::string name(part.substr(0, colon));
    InputProfile dims;
    // Split at 'x' outside braces (a bucket list holds no 'x').
    for (absl::string_view d : absl::StrSplit(part.substr(colon + 1), 'x')) {
      absl::StatusOr<DimProfile> dim = ParseDim(d);
      if (!dim.ok()) {
        return bad(absl::StrCat("dimension ", dims.size(), " '", d, "': ", dim.status().message()));
      }
      dims.push_back(*std::move(dim));
    }
    if (!profiles.emplace(name, std::move(dims)).second) return bad("the input is given twice");
  }
  return profiles;
}

absl::StatusOr<std::map<std::string, double>> ParsePadValues(absl::string_view text) {
  std::map<std::string, double> pads;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    const size_t colon = part.rfind(':');
    double v = 0;
    if (colon == absl::string_view::npos || colon == 0 ||
        !absl::SimpleAtod(part.substr(colon + 1), &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad padding '", part, "': expected NAME:VALUE, e.g. attention_mask:0"));
    }
    if (!pads.emplace(std::string(part.substr(0, colon)), v).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad padding '", part, "': the input is given twice"));
    }
  }
  return pads;
}

}  // namespace recq

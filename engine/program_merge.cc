#include "engine/program_merge.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace recq::internal {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Code returns `source` with comments, string and character literals and
// preprocessor lines (continuations included) blanked out.
std::string Code(absl::string_view source) {
  std::string out(source.size(), ' ');
  bool line_start = true;
  for (size_t i = 0; i < source.size();) {
    const char c = source[i];
    if (c == '\n') {
      out[i++] = '\n';
      line_start = true;
      continue;
    }
    if (line_start && (c == ' ' || c == '\t')) {
      ++i;
      continue;
    }
    if (line_start && c == '#') {  // a preprocessor line, to its unescaped end
      while (i < source.size() && source[i] != '\n') {
        if (source[i] == '\\' && i + 1 < source.size() && source[i + 1] == '\n') ++i;
        ++i;
      }
      continue;
    }
    line_start = false;
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      while (i < source.size() && source[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < source.size() && source[i + 1] == '*') {
      const size_t end = source.find("*/", i + 2);
      i = end == absl::string_view::npos ? source.size() : end + 2;
    } else if (c == '"' || c == '\'') {
      for (++i; i < source.size() && source[i] != c; ++i) {
        if (source[i] == '\\') ++i;
      }
      ++i;
    } else {
      out[i] = c;
      ++i;
    }
  }
  return out;
}

const absl::flat_hash_set<std::string>& Keywords() {
  static const auto* keywords = new absl::flat_hash_set<std::string>{
      "__attribute__", "kernel",     "__kernel", "void",     "inline",  "static",  "const",
      "constant",      "__constant", "global",   "__global", "local",   "__local", "private",
      "__private",     "restrict",   "volatile", "unsigned", "signed",  "struct",  "union",
      "enum",          "typedef",    "if",       "else",     "for",     "while",   "do",
      "return",        "sizeof",     "switch",   "case",     "default", "break",   "continue"};
  return *keywords;
}

// The names a build option -DNAME or -DNAME=VALUE defines, and its
// #define line; false for any other option.
bool OptionMacro(const std::string& option, std::string* name, std::string* define) {
  if (option.size() < 3 || option.compare(0, 2, "-D") != 0) return false;
  const std::string rest = option.substr(2);
  const size_t eq = rest.find('=');
  *name = rest.substr(0, eq);
  if (name->empty() || !std::all_of(name->begin(), name->end(), IsIdentChar)) return false;
  *define = absl::StrCat("#define ", *name, " ",
                         eq == std::string::npos ? "1" : rest.substr(eq + 1), "\n");
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> DefinedNames(absl::string_view body) {
  const std::string code = Code(body);
  std::set<std::string> names;
  int depth = 0, paren = 0;
  std::string last_ident, function, tag;
  bool after_params = false, typedef_statement = false, tag_next = false;
  auto reset = [&] {
    last_ident.clear();
    function.clear();
    tag.clear();
    after_params = typedef_statement = tag_next = false;
  };
  for (size_t i = 0; i < code.size();) {
    const char c = code[i];
    if (IsIdentStart(c)) {
      size_t j = i;
      while (j < code.size() && IsIdentChar(code[j])) ++j;
      const std::string ident = code.substr(i, j - i);
      i = j;
      // After a parameter list only an attribute may come before the body
      // or the ';' of a declaration. Anything else (a macro that defines
      // functions, invoked at file scope) hides what the file defines.
      if (depth == 0 && paren == 0 && after_params && ident != "__attribute__") return std::nullopt;
      if (depth != 0 || paren != 0 || after_params) continue;
      if (ident == "typedef") typedef_statement = true;
      if (tag_next && !Keywords().count(ident)) tag = ident;
      tag_next = ident == "struct" || ident == "union" || ident == "enum";
      last_ident = Keywords().count(ident) ? "" : ident;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {  // a number (and its suffix)
      while (i < code.size() && (IsIdentChar(code[i]) || code[i] == '.')) ++i;
      continue;
    }
    ++i;
    if (c == '{') {
      if (depth == 0 && paren == 0) {
        if (after_params && !function.empty()) names.insert(function);
        if (!tag.empty()) names.insert(tag);
        function.clear();
        tag.clear();
        after_params = false;
      }
      ++depth;
    } else if (c == '}') {
      if (depth > 0) --depth;
      if (depth == 0) last_ident.clear();  // a function's body, or a type's
    } else if (depth != 0) {
      continue;
    } else if (c == '(') {
      if (paren == 0 && !after_params && !last_ident.empty()) function = last_ident;
      ++paren;
      last_ident.clear();
    } else if (c == ')') {
      if (paren > 0) --paren;
      if (paren == 0 && !function.empty()) after_params = true;
    } else if (paren != 0) {
      continue;
    } else if (c == '=' || c == '[') {
      if (!after_params && !last_ident.empty()) names.insert(last_ident);
      last_ident.clear();
    } else if (c == ';') {
      if (typedef_statement && !last_ident.empty()) names.insert(last_ident);
      reset();
    } else if (c == ',') {
      last_ident.clear();
    }
  }
  if (after_params) return std::nullopt;  // a file-scope invocation last
  return std::vector<std::string>(names.begin(), names.end());
}

std::vector<std::string> DefinedMacros(absl::string_view source) {
  std::set<std::string> macros;
  size_t at = 0;
  while (at < source.size()) {
    size_t end = source.find('\n', at);
    if (end == absl::string_view::npos) end = source.size();
    absl::string_view line = source.substr(at, end - at);
    at = end + 1;
    size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size() || line[i] != '#') continue;
    ++i;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (line.substr(i, 6) != "define") continue;
    i += 6;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && IsIdentChar(line[j])) ++j;
    if (j > i) macros.insert(std::string(line.substr(i, j - i)));
  }
  return std::vector<std::string>(macros.begin(), macros.end());
}

MergePlan MergePrograms(const std::vector<MergeInput>& inputs, absl::string_view common,
                        size_t max_programs) {
  MergePlan plan;
  plan.program_of.assign(inputs.size(), MergePlan::kNotMerged);
  plan.suffix_of.assign(inputs.size(), "");
  std::set<std::string> common_macros;
  for (std::string& m : DefinedMacros(common)) common_macros.insert(std::move(m));
  // The identifiers common.cl mentions: an option naming one of them
  // changes common.cl's meaning, so it must be the same across a program.
  std::set<std::string> common_idents;
  for (size_t i = 0; i < common.size();) {
    if (!IsIdentStart(common[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < common.size() && IsIdentChar(common[j])) ++j;
    common_idents.insert(std::string(common.substr(i, j - i)));
    i = j;
  }

  // Mergeable inputs, grouped by the options common.cl reads.
  std::map<std::vector<std::string>, std::vector<size_t>> groups;
  std::vector<std::vector<std::string>> names(inputs.size()), macros(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    bool mergeable = true;
    std::vector<std::string> shared;
    for (const std::string& o : inputs[i].options) {
      std::string name, define;
      if (!OptionMacro(o, &name, &define)) {
        mergeable = false;
        break;
      }
      if (common_idents.count(name)) shared.push_back(o);
    }
    macros[i] = DefinedMacros(inputs[i].body);
    for (const std::string& m : macros[i]) mergeable = mergeable && !common_macros.count(m);
    if (!mergeable) continue;
    std::optional<std::vector<std::string>> defined = DefinedNames(inputs[i].body);
    if (!defined.has_value()) continue;
    // A name the file also #defines is the macro's business.
    for (std::string& n : *defined) {
      if (!std::binary_search(macros[i].begin(), macros[i].end(), n)) names[i].push_back(n);
    }
    std::sort(shared.begin(), shared.end());
    groups[shared].push_back(i);
  }
  for (const auto& [shared, members] : groups) {
    // Largest first, each to the program with the least source so far.
    const size_t count = std::min(std::max<size_t>(max_programs, 1), members.size());
    std::vector<size_t> order = members;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return inputs[a].body.size() > inputs[b].body.size();
    });
    std::vector<std::vector<size_t>> bins(count);
    std::vector<size_t> bytes(count, 0);
    for (size_t i : order) {
      const size_t b =
          static_cast<size_t>(std::min_element(bytes.begin(), bytes.end()) - bytes.begin());
      bins[b].push_back(i);
      bytes[b] += inputs[i].body.size();
    }
    for (std::vector<size_t>& bin : bins) {
      if (bin.size() < 2) continue;
      std::sort(bin.begin(), bin.end());  // the inputs' order: deterministic sources
      MergedProgram merged;
      merged.options = shared;
      merged.inputs = bin;
      merged.source = absl::StrCat(common, "\n");
      for (size_t i : bin) {
        const std::string suffix = absl::StrCat("__p", i);
        plan.program_of[i] = plan.programs.size();
        plan.suffix_of[i] = suffix;
        std::string& s = merged.source;
        absl::StrAppend(&s, "// ", inputs[i].file, " ", absl::StrJoin(inputs[i].options, " "),
                        "\n");
        std::vector<std::string> undefine = names[i];
        for (const std::string& o : inputs[i].options) {
          std::string name, define;
          OptionMacro(o, &name, &define);
          if (std::find(shared.begin(), shared.end(), o) != shared.end()) continue;
          absl::StrAppend(&s, define);
          undefine.push_back(name);
        }
        for (const std::string& n : names[i])
          absl::StrAppend(&s, "#define ", n, " ", n, suffix, "\n");
        absl::StrAppend(&s, "#line 1\n", inputs[i].body, "\n");
        undefine.insert(undefine.end(), macros[i].begin(), macros[i].end());
        std::sort(undefine.begin(), undefine.end());
        undefine.erase(std::unique(undefine.begin(), undefine.end()), undefine.end());
        for (const std::string& n : undefine) absl::StrAppend(&s, "#undef ", n, "\n");
      }
      plan.programs.push_back(std::move(merged));
    }
  }
  return plan;
}

}  // namespace recq::internal

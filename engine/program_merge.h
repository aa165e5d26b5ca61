// Program merging: several programs of the kernel library built as one.
//
// PoCL pays a fixed cost for every program it builds from source, whatever
// its size: the OpenCL C header and common.cl parsed again, the kernel
// library linked again. On a 2-core AMD EPYC (AVX2, PoCL 3.1) a one-line
// kernel took 170-270 ms to build, and MobileNet V2's nine programs
// 260-420 ms each; the nine as one program took 0.77-0.80 s against
// 2.4-3.1 s apart. MergePrograms packs the programs of one compile into
// at most two (one for the compiling process, one for its build helper).
// Compiles merge only on a cold start (BuildPrograms in engine.cc): a
// merged program serves only its own set, and the programs merged into it
// are stored apart.
//
// Each program's file body becomes a chunk of the merged source, after
// common.cl, which comes once. A chunk defines its build options as
// macros, renames the functions, variables and types it defines (a macro
// `name` -> `name__pN`, so that two chunks of one file, or two files with
// a helper of the same name, do not collide), and undefines its options,
// renames and macros after itself. The kernels' entry points are renamed
// the same way.
#ifndef RECQ_ENGINE_PROGRAM_MERGE_H_
#define RECQ_ENGINE_PROGRAM_MERGE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace recq::internal {

// One program to build: a file of the kernel library and its options.
struct MergeInput {
  std::string file;                  // "conv2d_3x3.cl"
  std::vector<std::string> options;  // build options
  std::string body;                  // the file's source, without common.cl
};

// One merged program: its full source (common.cl included), its build
// options, and the inputs it holds (indices into MergePrograms' `inputs`,
// two or more).
struct MergedProgram {
  std::string source;
  std::vector<std::string> options;
  std::vector<size_t> inputs;
};

struct MergePlan {
  std::vector<MergedProgram> programs;
  // Per input: the merged program that holds it (kNotMerged: none, the
  // input is built as it is), and the suffix its defined names (its
  // kernels' entry points included) carry there.
  static constexpr size_t kNotMerged = static_cast<size_t>(-1);
  std::vector<size_t> program_of;
  std::vector<std::string> suffix_of;
};

// MergePrograms packs `inputs` into at most `max_programs` programs
// (balanced by source size), given the prelude `common` (common.cl) that
// each input's full source starts with. An input is left out (kNotMerged)
// when an option is not a -D, when the file defines a macro that common.cl
// defines too, when DefinedNames cannot tell what it defines, or when it
// would be alone in its program.
// Inputs are merged only with inputs whose options that common.cl reads
// (RECQ_T, the precision's) are the same.
MergePlan MergePrograms(const std::vector<MergeInput>& inputs, absl::string_view common,
                        size_t max_programs);

// DefinedNames returns the identifiers that `body` defines at file scope:
// functions with a body, variables, struct/union/enum tags and typedef
// names (not declarations without a body). Comments, strings and
// preprocessor lines are skipped. nullopt where a file-scope macro
// invocation may define more (`DEFINE_OPS(float)`). Exposed for tests.
std::optional<std::vector<std::string>> DefinedNames(absl::string_view body);

// DefinedMacros returns the names of the macros `source` #defines.
std::vector<std::string> DefinedMacros(absl::string_view source);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_PROGRAM_MERGE_H_

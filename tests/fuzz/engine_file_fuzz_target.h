// The engine-file fuzzer's one input, shared by the libFuzzer target and its
// regression test.
#ifndef RECQ_TESTS_FUZZ_ENGINE_FILE_FUZZ_TARGET_H_
#define RECQ_TESTS_FUZZ_ENGINE_FILE_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>

namespace recq::fuzz {

// EngineFileFuzzOne reads one input through the engine-file archive and
// verifier (engine/engine_file/archive.h, verifier.h). An input whose first
// byte is odd is the rest taken as a payload and wrapped in a valid envelope
// (so that mutations reach the verifier behind the checksum); otherwise it
// is a whole file. Aborts if the archive returns anything but OK,
// InvalidArgument or DataLoss, if the verifier returns anything but OK or
// InvalidArgument, or if an accepted file's message, wrapped again, does not
// read back as the same message. Returns 1 when the input was accepted.
int EngineFileFuzzOne(const uint8_t* data, size_t size);

}  // namespace recq::fuzz

#endif  // RECQ_TESTS_FUZZ_ENGINE_FILE_FUZZ_TARGET_H_

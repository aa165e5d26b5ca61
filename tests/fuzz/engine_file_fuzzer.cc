// libFuzzer target for the engine-file reader (recq::internal::
// ReadEngineFileArchive and VerifyEngineFile, the recq_engine_file_format
// library alone): whole files, and payloads wrapped in a valid envelope so
// that mutations get past the checksum (see engine_file_fuzz_target.h). The
// property checked: every input is OK, InvalidArgument or DataLoss, without
// crashing, leaking or tripping ASan/UBSan. Build and run with
// scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/engine_file_fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  recq::fuzz::EngineFileFuzzOne(data, size);
  return 0;
}

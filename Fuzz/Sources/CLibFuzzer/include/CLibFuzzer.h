#ifndef VANE_FUZZ_CLIBFUZZER_H
#define VANE_FUZZ_CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, linked by -sanitize=fuzzer): parses libFuzzer's options from
/// argv and runs `callback` on each input. Each harness's main calls it, because SwiftPM names
/// an executable's entry point itself, so libFuzzer's own main cannot be used.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif

#ifndef CVANE_SHA256_H
#define CVANE_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Whether this process compresses with the CPU's SHA-256 instructions: SHA-NI on x86-64 (asked
/// of CPUID on first use and kept), the ARMv8 SHA2 instructions on arm64 builds that target them.
bool cvane_sha256_has_hardware(void);

/// Compresses `block_count` 64-byte blocks into `state` (the eight words a…h, native byte order)
/// with the CPU's SHA-256 instructions. Returns false and leaves `state` as it was when this CPU
/// or build has none; the caller then runs its own rounds.
bool cvane_sha256_compress_hardware(uint32_t state[8], const uint8_t *blocks, size_t block_count);

#endif

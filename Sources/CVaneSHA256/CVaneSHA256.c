// SHA-256's compression function on the CPU's own instructions, for VaneCore's percent buckets.
// Swift has no intrinsics, so this small C target holds them; VaneCore pads the message and keeps
// its Swift rounds for CPUs (and builds) without them.

#include "CVaneSHA256.h"

#if defined(__x86_64__) || (defined(__aarch64__) && defined(__ARM_FEATURE_SHA2))
// FIPS 180-4's round constants, read four at a time.
static const uint32_t round_constants[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};
#endif

#if defined(__x86_64__)

#include <cpuid.h>
#include <immintrin.h>

// Compiled for SHA-NI whatever the target's baseline; only called after CPUID said yes.
__attribute__((target("sha,sse4.1,ssse3"))) static void compress_sha_ni(
    uint32_t state[8], const uint8_t *blocks, size_t block_count) {
    // Big-endian message words to native order.
    const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    // The instructions keep the state as ABEF and CDGH (most significant lane first).
    __m128i cdab = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[0]), 0xB1);
    __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[4]), 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);

    for (; block_count > 0; block_count--, blocks += 64) {
        const __m128i abef_before = abef;
        const __m128i cdgh_before = cdgh;
        // The schedule's last sixteen words, four to a register: words[g % 4] holds W[4g…4g+3].
        __m128i words[4];
        for (int group = 0; group < 16; group++) {
            __m128i *current = &words[group & 3];
            if (group < 4) {
                *current = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks + 16 * group)), byte_swap);
            } else {
                // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16], four at a time.
                const __m128i previous = words[(group + 3) & 3];
                const __m128i seven_back = _mm_alignr_epi8(previous, words[(group + 2) & 3], 4);
                __m128i next = _mm_sha256msg1_epu32(*current, words[(group + 1) & 3]);
                next = _mm_add_epi32(next, seven_back);
                *current = _mm_sha256msg2_epu32(next, previous);
            }
            __m128i constant_plus_word =
                _mm_add_epi32(*current, _mm_load_si128((const __m128i *)&round_constants[4 * group]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, constant_plus_word);
            constant_plus_word = _mm_shuffle_epi32(constant_plus_word, 0x0E);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, constant_plus_word);
        }
        abef = _mm_add_epi32(abef, abef_before);
        cdgh = _mm_add_epi32(cdgh, cdgh_before);
    }

    const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}

// 0 until the first call asks CPUID, then 1 (no SHA-NI) or 2 (SHA-NI, SSE4.1 and SSSE3). Threads
// racing on the first call ask the same CPU and store the same answer.
static int sha_ni_support = 0;

static bool detect_sha_ni(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    const bool ssse3 = (ecx & bit_SSSE3) != 0;
    const bool sse41 = (ecx & bit_SSE4_1) != 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    const bool sha = (ebx & (1u << 29)) != 0;
    return ssse3 && sse41 && sha;
}

bool cvane_sha256_has_hardware(void) {
    int support = __atomic_load_n(&sha_ni_support, __ATOMIC_RELAXED);
    if (support == 0) {
        support = detect_sha_ni() ? 2 : 1;
        __atomic_store_n(&sha_ni_support, support, __ATOMIC_RELAXED);
    }
    return support == 2;
}

bool cvane_sha256_compress_hardware(uint32_t state[8], const uint8_t *blocks, size_t block_count) {
    if (!cvane_sha256_has_hardware()) return false;
    compress_sha_ni(state, blocks, block_count);
    return true;
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_SHA2)

#include <arm_neon.h>

// Every Apple arm64 device has the SHA2 instructions, and its compilers say so with
// __ARM_FEATURE_SHA2; other arm64 builds enable them with -march=armv8-a+crypto (or later).
static void compress_armv8(uint32_t state[8], const uint8_t *blocks, size_t block_count) {
    uint32x4_t abcd = vld1q_u32(&state[0]);
    uint32x4_t efgh = vld1q_u32(&state[4]);
    for (; block_count > 0; block_count--, blocks += 64) {
        const uint32x4_t abcd_before = abcd;
        const uint32x4_t efgh_before = efgh;
        // The schedule's last sixteen words, four to a register: words[g % 4] holds W[4g…4g+3].
        uint32x4_t words[4];
        for (int group = 0; group < 16; group++) {
            uint32x4_t *current = &words[group & 3];
            if (group < 4) {
                *current = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(blocks + 16 * group)));
            } else {
                const uint32x4_t partial = vsha256su0q_u32(*current, words[(group + 1) & 3]);
                *current = vsha256su1q_u32(partial, words[(group + 2) & 3], words[(group + 3) & 3]);
            }
            const uint32x4_t constant_plus_word = vaddq_u32(*current, vld1q_u32(&round_constants[4 * group]));
            const uint32x4_t abcd_round = abcd;
            abcd = vsha256hq_u32(abcd, efgh, constant_plus_word);
            efgh = vsha256h2q_u32(efgh, abcd_round, constant_plus_word);
        }
        abcd = vaddq_u32(abcd, abcd_before);
        efgh = vaddq_u32(efgh, efgh_before);
    }
    vst1q_u32(&state[0], abcd);
    vst1q_u32(&state[4], efgh);
}

bool cvane_sha256_has_hardware(void) { return true; }

bool cvane_sha256_compress_hardware(uint32_t state[8], const uint8_t *blocks, size_t block_count) {
    compress_armv8(state, blocks, block_count);
    return true;
}

#else

bool cvane_sha256_has_hardware(void) { return false; }

bool cvane_sha256_compress_hardware(uint32_t state[8], const uint8_t *blocks, size_t block_count) {
    (void)state;
    (void)blocks;
    (void)block_count;
    return false;
}

#endif

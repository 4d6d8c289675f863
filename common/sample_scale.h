/* sample_scale.h: the one rescaling of integer samples between ranges. */
/* Rounded to nearest; used by depth changes, PGM maxvals and integral pictures. */

#ifndef GS_SAMPLE_SCALE_H
#define GS_SAMPLE_SCALE_H

#include <stdint.h>

/* v in [0, from_max] to [0, to_max]: round(v * to_max / from_max), halves up; exact in
 * 128-bit arithmetic for any 64-bit values. from_max > 0. E.g. 8 -> 16 bits is v * 257,
 * 16 -> 8 bits is round(v / 257). */
static inline uint64_t gs_rescale(uint64_t v, uint64_t from_max, uint64_t to_max)
{
    return (uint64_t)(((unsigned __int128)v * to_max + from_max / 2) / from_max);
}

#endif /* GS_SAMPLE_SCALE_H */

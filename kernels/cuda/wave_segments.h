/* wave_segments.h: the rows of a column walk's segments, so that its blocks fill whole waves of the device. */
#ifndef GS_WAVE_SEGMENTS_H
#define GS_WAVE_SEGMENTS_H

#include <stdint.h>

/* Fewest rows a segment takes: the walk reads 2K rows beyond its own, a small share of 32. */
#define GS_MIN_WAVE_SEGMENT_ROWS 32u

/*
 * Rows a segment for a walk of out_rows rows whose grid is blocks_x blocks across and one
 * block a segment down, on a device that holds `resident` blocks at once: about
 * default_rows, so many that the segments make the nearest whole number of waves (at least
 * one), and at least GS_MIN_WAVE_SEGMENT_ROWS. A grid wider than a wave keeps default_rows.
 * Plain C, so the host tests check it without a device.
 */
static inline uint32_t gs_wave_segment_rows(uint32_t out_rows, uint32_t blocks_x, uint64_t resident,
                                            uint32_t default_rows)
{
    const uint64_t per_wave = blocks_x > 0 ? resident / blocks_x : 0; /* segments a wave holds */
    if (per_wave == 0 || default_rows == 0) return default_rows > 0 ? default_rows : 1;
    const uint64_t segs = ((uint64_t)out_rows + default_rows - 1) / default_rows;
    uint64_t waves = (segs + per_wave / 2) / per_wave;
    if (waves == 0) waves = 1;
    const uint64_t n = waves * per_wave;
    uint64_t rows = ((uint64_t)out_rows + n - 1) / n;
    if (rows < GS_MIN_WAVE_SEGMENT_ROWS) rows = GS_MIN_WAVE_SEGMENT_ROWS;
    return (uint32_t)rows;
}

#endif /* GS_WAVE_SEGMENTS_H */

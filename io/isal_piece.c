/* isal_piece.c: an ISA-L deflate stream set up for one piece, its bytes independent of where the stream lies. */

#include "isal_piece.h"
#include "deflate_fast.h"

#include <isa-l.h>
#include <stdint.h>

int gs_isal_piece_start(struct isal_zstream *z, int level, unsigned char *level_buf, size_t level_buf_size,
                        const unsigned char *dict, size_t dict_len, const unsigned char *in, size_t len,
                        int last, unsigned char *lead)
{
    int lead_len = 0;
    if (!dict_len && len) { /* a stream's first piece: its first byte leads, stored (isal_piece.h) */
        lead_len = (int)gs_deflate_stored(in, 1, 0, lead);
        dict = in, dict_len = 1;
        ++in, --len;
    }
    isal_deflate_init(z);
    z->level = (uint32_t)level;
    z->level_buf = level_buf;
    z->level_buf_size = (uint32_t)level_buf_size;
    z->gzip_flag = IGZIP_DEFLATE;
    if (dict_len && isal_deflate_set_dict(z, (uint8_t *)dict, (uint32_t)dict_len) != COMP_OK) return -1;
    z->flush = SYNC_FLUSH;
    z->end_of_stream = (uint16_t)(last != 0);
    z->next_in = (uint8_t *)in;
    z->avail_in = (uint32_t)len;
    return lead_len;
}

/* stb_image_build.c: stb_image compiled into gsmooth for read_stb.c. */
/* From Debian's libstb-dev header, for the formats read_stb.c serves (PSD, HDR, PIC), with
 * an allocator that zero-fills so no decoder state or pixel is ever uninitialised. */

#include <stdlib.h>
#include <string.h>

/* realloc that zero-fills what it adds: a decoder that leaves part of a buffer unwritten
 * leaves zeros, never earlier heap contents (another file's pixels, in a batch). */
static void *zeroed_realloc(void *p, size_t old_size, size_t new_size)
{
    unsigned char *q = realloc(p, new_size);
    if (q && new_size > old_size) memset(q + old_size, 0, new_size - old_size);
    return q;
}

#define STBI_MALLOC(size) calloc(1, (size))
#define STBI_REALLOC_SIZED(p, old_size, new_size) zeroed_realloc((p), (old_size), (new_size))
#define STBI_FREE(p) free(p)

/* Only what read_stb.c serves: PNG, JPEG and GIF have their own readers (libpng,
 * libjpeg-turbo, giflib), PGM/PPM, BMP and TGA gsmooth's own. */
#define STBI_ONLY_PSD
#define STBI_ONLY_HDR
#define STBI_ONLY_PIC
/* Input comes through callbacks (read_stb.c), never a FILE of stb's own. */
#define STBI_NO_STDIO
/* Wider or taller than this is refused by stb itself (its default, made explicit): far
 * above any real file of these formats, and --max-pixels applies before decoding anyway. */
#define STBI_MAX_DIMENSIONS (1 << 24)

#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

/* stb_image_write_build.c: stb_image_write compiled into gsmooth for write_stb.c. */
/* From Debian's libstb-dev header, for write_stb.c's BMP, TGA and JPEG encoders; every byte
 * goes through its callbacks, never a FILE of stb's own. */

#define STBI_WRITE_NO_STDIO
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

/* stb_instrumented.c: compiles stb_image and stb_image_write into the fuzz harness, so libFuzzer's coverage and the sanitizers see the decoders' own code instead of the uninstrumented libstb.so (the harness's definitions take precedence at link time). */
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image.h>
#include <stb_image_write.h>

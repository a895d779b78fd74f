// zlib (zlib1g-dev), for compressing what the store keeps at rest.
#include <zlib.h>

// deflateInit2 is a macro, which Swift cannot call: a raw deflate stream (no zlib header or trailer) at `level`.
static inline int folio_deflate_init_raw(z_streamp stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}

// inflateInit2 is a macro too: a gzip stream (header and trailer checked), for reading `.gz` files.
static inline int folio_inflate_init_gzip(z_streamp stream) {
    return inflateInit2(stream, 15 + 16);
}

// zlib (zlib1g-dev), for compressing what the store keeps at rest.
#include <zlib.h>

/*
 * image_none.c -- no database image: what hardware/mkimage links, so that the database it
 * serializes is made by the defaults' SQL.
 */
#include <stddef.h>

const size_t hw_db_image_len = 0;
const unsigned char hw_db_image[1] = {0};

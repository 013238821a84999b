/*
 * jsontext: checks on raw JSON text that cJSON does not make.
 *
 * Contract
 * - cJSON hands strings out as C strings, so a NUL inside one (a raw NUL
 *   byte, which JSON forbids but cJSON accepts, or the escape \u0000) cuts
 *   the value short without an error. A parser calls ps_json_nul_check() on
 *   the text before parsing and refuses the record when it fails, so a
 *   value is stored whole or not at all.
 * - Returns NULL when the text holds no NUL, else a reason (static text)
 *   and the 1-based column of the first one in *col.
 */
#ifndef PS_JSONTEXT_H
#define PS_JSONTEXT_H

#include <stddef.h>

const char *ps_json_nul_check(const char *data, size_t len, size_t *col);

#endif

/*
 * fuzz_config: the configuration loader on arbitrary bytes.
 *
 * The loader reads a file (it re-reads the text for large integers and
 * names the file in messages), so each input is written to one private
 * temporary file and loaded from there. Every outcome is fine except a crash,
 * a leak or an error without a message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "formats/format.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* libconfig 1.5 (Debian 12) leaks string buffers in its own scanner when a
 * parse error hits inside or right after a string literal (strbuf_append,
 * libconfig_yylex). perfship never allocates through libconfig frames, so
 * this hides only the library's leaks, and travels with the target so every
 * runner (scripts/fuzz, by hand) gets it. */
const char *__lsan_default_suppressions(void) { return "leak:libconfig.so\n"; }

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_temp_file(path, sizeof path, "/tmp/fuzz-config-XXXXXX");
  fuzz_write_file(path, data, size);

  ps_config c;
  ps_config_defaults(&c);
  ps_buf err;
  ps_buf_init(&err, 4096);
  int rc = ps_config_load(&c, path, ps_format_source_rules, &err);
  if (rc < 0 && (!err.data || err.len == 0))
    abort(); /* every failure must say why */
  if (rc == 0) {
    /* what a loaded config promises its users */
    if (!c.influxdb.url || !c.state_dir)
      abort();
    for (size_t i = 0; i < c.nsources; i++)
      if (!c.sources[i].path || !c.sources[i].path[0])
        abort();
  }
  ps_buf_free(&err);
  ps_config_free(&c);
  return 0;
}

/* Placeholder until the configuration module lands: defaults only. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ps_config_defaults(ps_config *c) { memset(c, 0, sizeof *c); c->log_level = PS_LOG_INFO; }
int ps_config_load(ps_config *c, const char *path, ps_buf *err) {
  (void)c;
  ps_buf_printf(err, "%s: configuration loading is not implemented yet", path);
  return -ENOSYS;
}
int ps_config_load_secrets(ps_config *c, ps_buf *err) { (void)c; (void)err; return 0; }
void ps_config_free(ps_config *c) { (void)c; }

/*
 * cmd/common.c: steps several subcommands share, so that each prints the
 * same message and exits with the same code for the same trouble
 * (include/cmd/cmd.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd/cmd.h"
#include "state/state.h"
#include "core/jsontext.h"
#include "core/sysexits_ps.h"
#include "core/visible.h"

int ps_cmd_load_secrets(ps_config *cfg) {
  ps_buf err;
  ps_buf_init(&err, 4096);
  int rc = ps_config_load_secrets(cfg, &err);
  if (rc < 0)
    ps_visible_say(stderr, "perfship: %s\n", err.data ? err.data : "cannot read the secrets");
  ps_buf_free(&err);
  return rc < 0 ? PS_EXIT_CONFIG : PS_EXIT_OK;
}

const char *ps_cmd_state_dir(const ps_config *cfg) {
  return cfg->state_dir && cfg->state_dir[0] ? cfg->state_dir : ".";
}

void ps_cmd_load_state(ps_state *s, const char *dir, const char *cmd) {
  ps_buf warn;
  ps_buf_init(&warn, 4096);
  ps_state_load(s, dir, &warn);
  if (warn.len)
    ps_visible_say(stderr, "perfship %s: %s\n", cmd, warn.data);
  ps_buf_free(&warn);
}

void ps_cmd_triage_bad_line(void *ctx, const char *name, size_t line, const char *why) {
  long *n = ctx;
  if (n)
    (*n)++;
  /* the reason quotes the line's id: data, shown and not obeyed */
  ps_visible_say(stderr, "%s:%zu: %s (the line is left out)\n", name, line, why);
}

void ps_cmd_triage_checks(const char *cmd, const ps_triage_set *s, long *bad) {
  ps_triage_check_file(s, ps_cmd_triage_bad_line, bad);
  if (!s->repeated)
    return;
  ps_visible_say(stderr,
                 "perfship %s: warning: the server holds %zu perfship_triage point%s whose id a "
                 "newer point has too (the first: %s); the newest of each is in force\n",
                 cmd, s->repeated, s->repeated == 1 ? "" : "s", s->repeated_id);
}

int ps_cmd_print_json(const cJSON *root) {
  char *text = root ? cJSON_Print(root) : NULL;
  ps_buf out;
  ps_buf_init(&out, 0);
  int rc = text && ps_utf8_repair(&out, text, strlen(text)) == 0 ? 0 : -ENOMEM;
  /* JSON is for programs: cJSON writes every control (ESC too) as \u00XX,
   * so it drives no terminal; the rest is data, kept as it is */
  if (rc == 0 && (fwrite(out.data, 1, out.len, stdout) != out.len || putchar('\n') == EOF))
    rc = -EIO;
  free(text);
  ps_buf_free(&out);
  return rc;
}

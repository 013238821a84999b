/*
 * cmd/status.c: `perfship status`: what the state directory says. Read-only
 * and safe while the agent runs (the state file is replaced atomically).
 * Per file: the acknowledged offset against the current size, so "behind"
 * is what a restart would send again; then the pending points at the last
 * save, whether the server answers (status code, message, since when) and
 * the last errors. Nothing here can hold a secret: the state never stores
 * one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cmd/cmd.h"
#include "core/sysexits_ps.h"
#include "core/visible.h"
#include "state/state.h"

/* The agent's trouble with the server at its last save (the "server"
 * section the delivery keeps: include/pipeline/delivery.h). The agent
 * saves when an episode begins, changes or ends, so while it runs this is
 * now. */
static void print_server(const ps_state *s, int running) {
  const char *json = ps_state_section(s, "server");
  if (!json)
    return; /* saved by an agent from before the section */
  cJSON *o = cJSON_Parse(json);
  const cJSON *since = cJSON_GetObjectItemCaseSensitive(o, "since");
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status");
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(o, "message");
  if (!cJSON_IsNumber(since) || since->valuedouble <= 0) {
    printf("server: %s\n", running ? "answering" : "was answering when the agent stopped");
    cJSON_Delete(o);
    return;
  }
  char when[32] = "?";
  time_t t = (time_t)since->valuedouble;
  struct tm tm;
  if (gmtime_r(&t, &tm))
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  long code = cJSON_IsNumber(status) ? (long)status->valuedouble : 0;
  printf("server: %s since %s: ", running ? "failing" : "was failing when the agent stopped,",
         when);
  if (code)
    printf("HTTP %ld", code);
  else
    printf("unreachable");
  if (cJSON_IsString(msg) && msg->valuestring[0]) {
    fputs(" (", stdout);
    for (const char *c = msg->valuestring; *c; c++) /* server text: no control bytes */
      putchar((unsigned char)*c < 0x20 || *c == 0x7f ? ' ' : *c);
    putchar(')');
  }
  printf("; the data is kept and retried\n");
  cJSON_Delete(o);
}

int ps_cmd_status(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)cfg_given;
  (void)argv;
  if (argc > 1) {
    fprintf(stderr, "perfship status: takes no arguments\n");
    return PS_EXIT_USAGE;
  }
  const char *sd = ps_cmd_state_dir(cfg);
  ps_state s;
  ps_cmd_load_state(&s, sd, "status");
  int lock = ps_state_lock(sd, 0);
  const char *agent = lock == -EWOULDBLOCK ? "running" : "not running";
  if (lock >= 0)
    close(lock);
  printf("state directory: %s (agent %s)\n", sd, agent);
  if (!s.existed) {
    printf("no state saved yet\n");
    ps_state_free(&s);
    return PS_EXIT_OK;
  }
  char when[32] = "?";
  time_t t = (time_t)s.saved_at;
  struct tm tm;
  if (s.saved_at && gmtime_r(&t, &tm))
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  printf("saved at: %s by pid %d\n", when, s.pid);
  printf("pending points: %" PRIu64 "\n", s.pending_points);
  printf("files: %zu\n", s.nfiles);
  for (size_t i = 0; i < s.nfiles; i++) {
    const ps_state_file *f = &s.files[i];
    struct stat st;
    int have = stat(f->path, &st) == 0;
    /* the path as it is, with what would drive the terminal or reorder
     * the line shown as escapes (core/visible.h) */
    if (f->has_doc) {
      ps_visible_say(stdout, "  %s  document, contents acknowledged (hash %016" PRIx64 ")%s\n",
                     f->path, f->doc_hash, have ? "" : "  [missing]");
    } else if (have && (uint64_t)st.st_ino == f->id.ino) {
      uint64_t size = (uint64_t)st.st_size;
      ps_visible_say(stdout,
                     "  %s  offset %" PRIu64 " of %" PRIu64 " (line %" PRIu64 ", %" PRIu64
                     " bytes behind)\n",
                     f->path, f->offset, size, f->line, size > f->offset ? size - f->offset : 0);
    } else {
      ps_visible_say(stdout, "  %s  offset %" PRIu64 " (line %" PRIu64 ")  [%s]\n", f->path,
                     f->offset, f->line, have ? "replaced" : "missing");
    }
  }
  print_server(&s, lock == -EWOULDBLOCK);
  printf("last errors: %zu\n", s.nerrors);
  for (size_t i = 0; i < s.nerrors; i++) {
    ps_visible_say(stdout, "  %s\n", s.errors[i]);
  }
  ps_state_free(&s);
  return PS_EXIT_OK;
}

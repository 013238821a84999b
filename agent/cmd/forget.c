/*
 * cmd/forget.c: `perfship forget PATH...`: drop the saved state of files or
 * of whole folders (a run folder), so the next start reads them again.
 * Refused while an agent runs on the same state directory: it would write
 * its in-memory offsets back over the change.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "state/state.h"
#include "core/sysexits_ps.h"

/* Drops the run tracker's memory of folders at or under `path`, so their
 * markers are judged (and sent) again. Returns how many were dropped. */
static size_t forget_runs(ps_state *s, const char *path) {
  const char *runs = ps_state_section(s, "runs");
  cJSON *root = runs ? cJSON_Parse(runs) : NULL;
  if (!root)
    return 0;
  size_t dropped = 0;
  cJSON *item = root->child;
  while (item) {
    cJSON *next = item->next;
    const char *k = item->string;
    if (k && ps_path_under(k, path)) {
      cJSON_Delete(cJSON_DetachItemViaPointer(root, item));
      dropped++;
    }
    item = next;
  }
  if (dropped) {
    char *text = cJSON_PrintUnformatted(root);
    if (text && ps_state_set_section(s, "runs", text) < 0)
      free(text);
  }
  cJSON_Delete(root);
  return dropped;
}

/* Drops the slog reader's memory of stages read whole at or under `path`
 * (state section "slogs", pipeline/slogs.h), so their slogs are read
 * again too. Returns how many were dropped. */
static size_t forget_slogs(ps_state *s, const char *path) {
  const char *text = ps_state_section(s, "slogs");
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  cJSON *done = cJSON_GetObjectItemCaseSensitive(root, "done");
  size_t dropped = 0;
  cJSON *item = cJSON_IsArray(done) ? done->child : NULL;
  while (item) {
    cJSON *next = item->next;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(item, "path");
    if (cJSON_IsString(p) && ps_path_under(p->valuestring, path)) {
      cJSON_Delete(cJSON_DetachItemViaPointer(done, item));
      dropped++;
    }
    item = next;
  }
  /* the folders' finished cycles go too: perf.jsonl is read again and
   * counts them again (else each would count twice) */
  cJSON *cycles = cJSON_GetObjectItemCaseSensitive(root, "cycles");
  int changed = 0;
  item = cJSON_IsArray(cycles) ? cycles->child : NULL;
  while (item) {
    cJSON *next = item->next;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(item, "folder");
    if (cJSON_IsString(f) && ps_path_under(f->valuestring, path)) {
      cJSON_Delete(cJSON_DetachItemViaPointer(cycles, item));
      changed = 1;
    }
    item = next;
  }
  if (dropped || changed) {
    char *out = cJSON_PrintUnformatted(root);
    if (out && ps_state_set_section(s, "slogs", out) < 0)
      free(out);
  }
  cJSON_Delete(root);
  return dropped;
}

int ps_cmd_forget(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)cfg_given;
  if (argc < 2) {
    fprintf(stderr, "usage: perfship forget PATH...\n");
    return PS_EXIT_USAGE;
  }
  const char *sd = ps_cmd_state_dir(cfg);
  int lock = ps_state_lock(sd, 0);
  if (lock == -EWOULDBLOCK) {
    fprintf(stderr,
            "perfship forget: an agent is running with state_dir %s; stop it "
            "first (systemctl stop perfship), then forget, then start it\n",
            sd);
    return PS_EXIT_TEMPFAIL;
  }
  ps_state s;
  ps_cmd_load_state(&s, sd, "forget");
  size_t total = 0;
  for (int i = 1; i < argc; i++) {
    size_t n = ps_state_forget(&s, argv[i]);
    size_t runs = forget_runs(&s, argv[i]);
    size_t slogs = forget_slogs(&s, argv[i]);
    char real[PATH_MAX];
    if (realpath(argv[i], real) && strcmp(real, argv[i]) != 0) {
      n += ps_state_forget(&s, real);
      runs += forget_runs(&s, real);
      slogs += forget_slogs(&s, real);
    }
    printf("%s: forgot %zu file%s", argv[i], n, n == 1 ? "" : "s");
    if (runs)
      printf(" and %zu run folder%s", runs, runs == 1 ? "" : "s");
    if (slogs)
      printf(" and %zu slog stage%s", slogs, slogs == 1 ? "" : "s");
    printf("\n");
    total += n + runs + slogs;
  }
  int rc = PS_EXIT_OK;
  if (total && s.existed) {
    int e = ps_state_save(&s, sd);
    if (e < 0) {
      fprintf(stderr, "perfship forget: cannot save %s/state.json (%s)\n", sd,
              strerror(-e));
      rc = PS_EXIT_SOFTWARE;
    }
  }
  ps_state_free(&s);
  if (lock >= 0)
    close(lock);
  return rc;
}

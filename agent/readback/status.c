/*
 * readback/status.c: run statuses read back (include/readback/status.h).
 * The words are the writer's (runs/runs.c): read back with its table, a
 * status it writes can never be unknown to a reader.
 */
#include "readback/status.h"

#include <string.h>

static const ps_run_status ended[] = {
    [PS_RB_SUCCESS] = PS_RUN_STATUS_SUCCESS,
    [PS_RB_FAILED] = PS_RUN_STATUS_FAILED,
    [PS_RB_INTERRUPTED] = PS_RUN_STATUS_INTERRUPTED,
    [PS_RB_STALLED] = PS_RUN_STATUS_STALLED,
};

const char *ps_rb_status_name(ps_rb_status s) {
  if (s == PS_RB_RUNNING)
    return ps_run_status_name(PS_RUN_STATUS_NONE);
  if (s > PS_RB_RUNNING && (size_t)s < sizeof ended / sizeof ended[0])
    return ps_run_status_name(ended[s]);
  return "unknown";
}

ps_rb_status ps_rb_status_named(const char *name) {
  for (int s = PS_RB_RUNNING; name && s <= PS_RB_STALLED; s++)
    if (strcmp(name, ps_rb_status_name((ps_rb_status)s)) == 0)
      return (ps_rb_status)s;
  return PS_RB_UNKNOWN;
}

ps_run_status ps_rb_run_status(ps_rb_status s) {
  return s > PS_RB_RUNNING && (size_t)s < sizeof ended / sizeof ended[0] ? ended[s]
                                                                         : PS_RUN_STATUS_NONE;
}

/*
 * readback/status: the one table of the run statuses perfship reads back
 * (the `status` of `runs` markers and of `loadgen_run` points), for the
 * report, the judges and the commands.
 *
 * Contract
 * - The names are those the agent writes (runs/runs.h
 *   ps_run_status_name(): running, success, failed, interrupted, stalled);
 *   ps_rb_status_named() reads one back (PS_RB_UNKNOWN for NULL or any
 *   other word), ps_rb_status_name() gives it ("unknown" for
 *   PS_RB_UNKNOWN).
 * - ps_rb_run_status() is the judges' view (runs/runs.h): a run not known
 *   to have ended, unknown or running, is PS_RUN_STATUS_NONE.
 */
#ifndef PS_READBACK_STATUS_H
#define PS_READBACK_STATUS_H

#include "runs/runs.h"

typedef enum ps_rb_status {
  PS_RB_UNKNOWN = 0,
  PS_RB_RUNNING,
  PS_RB_SUCCESS,
  PS_RB_FAILED,
  PS_RB_INTERRUPTED,
  PS_RB_STALLED,
} ps_rb_status;

ps_rb_status ps_rb_status_named(const char *name);
const char *ps_rb_status_name(ps_rb_status s);
ps_run_status ps_rb_run_status(ps_rb_status s);

#endif

/*
 * alert/exec: the `exec` channel: a program of the user's (alerts.exec, an
 * argv) started once per event with the event's JSON object on its
 * standard input (docs/alerts.md "exec").
 *
 * Contract
 * - No shell and no interpolation: the argv is given as configured and
 *   nothing of the event reaches the command line. The event arrives as
 *   one line of JSON on stdin (then EOF); PERFSHIP_ALERT_EVENT and
 *   PERFSHIP_ALERT_ID are set in its environment. The agent's own
 *   PERFSHIP_* variables (the token) are not passed on.
 * - The program runs in a process group of its own. When it has not exited
 *   after `timeout_ms`, the whole group is killed (SIGKILL) and the event
 *   counts as not delivered. When it exits, what is left of its group
 *   (background children) is killed as well. Exit status 0 is delivered; anything else is
 *   not, and the answer quotes the first line it wrote (stdout or stderr).
 * - ps_alert_exec_send() is a channel's send (alert/channel.h). A program
 *   that cannot be started (-ENOENT, -EACCES) fails the call.
 * - ps_alert_exec_close() kills what still runs (their callbacks report
 *   "not delivered") and frees the channel once every handle is closed.
 * - Writing to a program that exits without reading its input must not
 *   kill the agent: the first send sets SIGPIPE to be ignored (children
 *   get the default back from libuv).
 */
#ifndef PS_ALERT_EXEC_H
#define PS_ALERT_EXEC_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "alert/channel.h"

typedef struct ps_alert_exec ps_alert_exec;

/* Copies argv (argc >= 1). Returns 0, -EINVAL or -ENOMEM. */
int ps_alert_exec_new(ps_alert_exec **out, uv_loop_t *loop, char *const *argv, size_t argc,
                      int64_t timeout_ms);
int ps_alert_exec_send(void *x, const ps_alert_event *ev, ps_alert_done_cb done, void *arg);
void ps_alert_exec_close(ps_alert_exec *x);

#endif

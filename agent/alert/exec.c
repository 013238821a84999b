/*
 * alert/exec.c: the exec channel (include/alert/exec.h).
 *
 * Design
 * - One job per event: the process, a pipe for its stdin, one for stdout,
 *   one for stderr and a timer, all initialised before uv_spawn() so that
 *   every path (a failed spawn too) closes the same five handles; the job
 *   is freed by the last close callback, never before (libuv: close
 *   callbacks own the memory).
 * - The answer is given once the program exited and both output pipes
 *   reached EOF, or shortly after the exit when a grandchild keeps them
 *   open. It quotes the first line of output: what a notifier says when it
 *   fails ("curl: (22) 403") is what the user needs to read.
 * - UV_PROCESS_DETACHED makes the program a process-group leader, so a
 *   timeout kills the notifier and anything it started (curl in a shell
 *   script) with one kill(-pid). The group is killed too when the program
 *   exits: a background child would otherwise outlive the delivery, and
 *   the agent, unseen (docs/alerts.md "exec"). The group id stays
 *   reserved while any member lives, so the kill cannot reach another
 *   process.
 */
#include "alert/exec.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

extern char **environ;

#define OUTPUT_KEEP 2048
#define EXIT_GRACE_MS 200
#define NHANDLES 5

typedef struct job job;

struct ps_alert_exec {
  uv_loop_t *loop;
  char **argv;
  size_t argc;
  int64_t timeout_ms;
  job *jobs;
  int closing;
};

struct job {
  ps_alert_exec *x;
  job *prev, *next;
  uv_process_t proc;
  uv_pipe_t in, out, err;
  uv_timer_t timer;
  uv_write_t wreq;
  char *input;
  ps_buf output;
  int open_handles;
  int spawned, exited, eofs, answered, timed_out, cancelled;
  int64_t exit_status;
  int term_signal;
  uint64_t started_ms;
  ps_alert_done_cb done;
  void *arg;
};

int ps_alert_exec_new(ps_alert_exec **out, uv_loop_t *loop, char *const *argv, size_t argc,
                      int64_t timeout_ms) {
  *out = NULL;
  if (!argv || argc == 0 || !argv[0] || !argv[0][0])
    return -EINVAL;
  ps_alert_exec *x = calloc(1, sizeof *x);
  if (!x || !(x->argv = calloc(argc + 1, sizeof *x->argv))) {
    free(x);
    return -ENOMEM;
  }
  x->loop = loop;
  x->timeout_ms = timeout_ms > 0 ? timeout_ms : 10000;
  for (size_t i = 0; i < argc; i++) {
    if (!(x->argv[i] = strdup(argv[i] ? argv[i] : ""))) {
      x->argc = i;
      ps_alert_exec_close(x);
      return -ENOMEM;
    }
  }
  x->argc = argc;
  *out = x;
  return 0;
}

static void exec_free(ps_alert_exec *x) {
  for (size_t i = 0; i < x->argc; i++)
    free(x->argv[i]);
  free(x->argv);
  free(x);
}

static void job_closed(uv_handle_t *h) {
  job *j = h->data;
  if (--j->open_handles > 0)
    return;
  ps_alert_exec *x = j->x;
  if (j->prev)
    j->prev->next = j->next;
  else
    x->jobs = j->next;
  if (j->next)
    j->next->prev = j->prev;
  free(j->input);
  ps_buf_free(&j->output);
  free(j);
  if (x->closing && !x->jobs)
    exec_free(x);
}

static void close_handle(uv_handle_t *h) {
  if (!uv_is_closing(h))
    uv_close(h, job_closed);
}

static void close_job(job *j) {
  close_handle((uv_handle_t *)&j->proc);
  close_handle((uv_handle_t *)&j->in);
  close_handle((uv_handle_t *)&j->out);
  close_handle((uv_handle_t *)&j->err);
  close_handle((uv_handle_t *)&j->timer);
}

static void answer(job *j) {
  if (j->answered)
    return;
  j->answered = 1;
  ps_alert_answer a = {0};
  char said[200] = "";
  ps_alert_answer_excerpt(said, sizeof said, j->output.data ? j->output.data : "",
                          j->output.len);
  double secs = (double)(uv_now(j->x->loop) - j->started_ms) / 1000.0;
  if (j->cancelled)
    snprintf(a.text, sizeof a.text, "stopped: the agent is shutting down");
  else if (j->timed_out)
    snprintf(a.text, sizeof a.text, "no exit after %lld ms; killed%s%s",
             (long long)j->x->timeout_ms, said[0] ? ": " : "", said);
  else if (j->term_signal)
    snprintf(a.text, sizeof a.text, "killed by signal %d after %.1f s%s%s", j->term_signal,
             secs, said[0] ? ": " : "", said);
  else
    snprintf(a.text, sizeof a.text, "exit %lld in %.1f s%s%s", (long long)j->exit_status,
             secs, said[0] ? ": " : "", said);
  a.delivered = !j->cancelled && !j->timed_out && !j->term_signal && j->exit_status == 0;
  close_job(j);
  j->done(j->arg, &a);
}

static void maybe_answer(job *j) {
  if (j->exited && j->eofs == 2)
    answer(j);
}

static void on_timeout(uv_timer_t *t);

static void on_exit_cb(uv_process_t *p, int64_t status, int term_signal) {
  job *j = p->data;
  j->exited = 1;
  j->exit_status = status;
  j->term_signal = term_signal;
  if (j->proc.pid > 0)
    kill(-j->proc.pid, SIGKILL); /* what it left behind; ESRCH when nothing */
  /* A grandchild may hold the output pipes open: do not wait for it. */
  uv_timer_stop(&j->timer);
  if (!uv_is_closing((uv_handle_t *)&j->timer))
    uv_timer_start(&j->timer, on_timeout, EXIT_GRACE_MS, 0);
  maybe_answer(j);
}

static void kill_group(job *j) {
  if (j->spawned && !j->exited && j->proc.pid > 0)
    kill(-j->proc.pid, SIGKILL);
}

static void on_timeout(uv_timer_t *t) {
  job *j = t->data;
  if (j->exited) {
    answer(j);
    return;
  }
  j->timed_out = 1;
  kill_group(j);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  static char scratch[4096];
  (void)h;
  (void)suggested;
  *buf = uv_buf_init(scratch, sizeof scratch);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  job *j = s->data;
  if (n > 0) {
    size_t room = j->output.len < OUTPUT_KEEP ? OUTPUT_KEEP - j->output.len : 0;
    ps_buf_append(&j->output, buf->base, (size_t)n < room ? (size_t)n : room);
    return;
  }
  if (n < 0) {
    uv_read_stop(s);
    j->eofs++;
    maybe_answer(j);
  }
}

static void on_written(uv_write_t *w, int status) {
  job *j = w->data;
  (void)status; /* a program that does not read its input is its business */
  close_handle((uv_handle_t *)&j->in);
}

/* The environment of the agent without its own PERFSHIP_* settings (the
 * token), plus the event's name and id. */
static char **child_env(const ps_alert_event *ev) {
  size_t n = 0;
  for (char **e = environ; e && *e; e++)
    n++;
  char **env = calloc(n + 3, sizeof *env);
  if (!env)
    return NULL;
  size_t k = 0;
  for (char **e = environ; e && *e; e++)
    if (strncmp(*e, "PERFSHIP_", 9) != 0)
      env[k++] = *e;
  char *a = NULL, *b = NULL;
  if (asprintf(&a, "PERFSHIP_ALERT_EVENT=%s", ps_alert_kind_name(ev->kind)) < 0)
    a = NULL;
  if (asprintf(&b, "PERFSHIP_ALERT_ID=%s", ev->id) < 0)
    b = NULL;
  if (!a || !b) {
    free(a);
    free(b);
    free(env);
    return NULL;
  }
  env[k++] = a;
  env[k++] = b;
  env[k] = NULL;
  return env;
}

static void free_env(char **env) {
  if (!env)
    return;
  size_t n = 0;
  while (env[n])
    n++;
  if (n >= 2) {
    free(env[n - 1]);
    free(env[n - 2]);
  }
  free(env);
}

/* The job's pipes and timer, each pointing back at the job; the job in
 * the channel's list. */
static void job_handles_init(ps_alert_exec *x, job *j) {
  uv_handle_t *hs[NHANDLES] = {(uv_handle_t *)&j->proc, (uv_handle_t *)&j->in,
                               (uv_handle_t *)&j->out, (uv_handle_t *)&j->err,
                               (uv_handle_t *)&j->timer};
  uv_pipe_init(x->loop, &j->in, 0);
  uv_pipe_init(x->loop, &j->out, 0);
  uv_pipe_init(x->loop, &j->err, 0);
  uv_timer_init(x->loop, &j->timer);
  for (size_t i = 0; i < NHANDLES; i++)
    hs[i]->data = j;
  j->next = x->jobs;
  if (x->jobs)
    x->jobs->prev = j;
  x->jobs = j;
}

/* Starts the command with the job's pipes as its stdin, stdout and
 * stderr; uv_spawn's answer. */
static int job_spawn(ps_alert_exec *x, job *j, char **env) {
  uv_stdio_container_t stdio[3];
  stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
  stdio[0].data.stream = (uv_stream_t *)&j->in;
  stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[1].data.stream = (uv_stream_t *)&j->out;
  stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[2].data.stream = (uv_stream_t *)&j->err;
  uv_process_options_t o;
  memset(&o, 0, sizeof o);
  o.file = x->argv[0];
  o.args = x->argv;
  o.env = env;
  o.exit_cb = on_exit_cb;
  o.flags = UV_PROCESS_DETACHED;
  o.stdio = stdio;
  o.stdio_count = 3;
  j->open_handles = NHANDLES;
  int rc = uv_spawn(x->loop, &j->proc, &o);
  j->proc.data = j;
  return rc;
}

int ps_alert_exec_send(void *xv, const ps_alert_event *ev, ps_alert_done_cb done, void *arg) {
  ps_alert_exec *x = xv;
  if (x->closing)
    return -ECANCELED;
  static int sigpipe_ignored;
  if (!sigpipe_ignored) {
    signal(SIGPIPE, SIG_IGN);
    sigpipe_ignored = 1;
  }
  job *j = calloc(1, sizeof *j);
  char *json = ps_alert_event_json(ev);
  char **env = child_env(ev);
  if (!j || !json || !env) {
    free(j);
    free(json);
    free_env(env);
    return -ENOMEM;
  }
  size_t len = strlen(json);
  char *line = realloc(json, len + 2);
  if (!line) {
    free(j);
    free(json);
    free_env(env);
    return -ENOMEM;
  }
  line[len] = '\n'; /* one line: the object, then the end of the input */
  line[len + 1] = '\0';
  j->input = line;
  j->x = x;
  j->done = done;
  j->arg = arg;
  ps_buf_init(&j->output, 0);
  j->started_ms = uv_now(x->loop);
  job_handles_init(x, j);
  int rc = job_spawn(x, j, env);
  free_env(env);
  if (rc < 0) {
    /* The handles are closed; the job goes with the last of them and no
     * callback is called (the caller hears of it from the return). */
    j->answered = 1;
    close_job(j);
    return rc;
  }
  j->spawned = 1;
  uv_timer_start(&j->timer, on_timeout, (uint64_t)x->timeout_ms, 0);
  uv_read_start((uv_stream_t *)&j->out, on_alloc, on_read);
  uv_read_start((uv_stream_t *)&j->err, on_alloc, on_read);
  uv_buf_t b = uv_buf_init(j->input, (unsigned)(len + 1));
  j->wreq.data = j;
  if (uv_write(&j->wreq, (uv_stream_t *)&j->in, &b, 1, on_written) < 0)
    close_handle((uv_handle_t *)&j->in);
  return 0;
}

void ps_alert_exec_close(ps_alert_exec *x) {
  if (!x)
    return;
  x->closing = 1;
  if (!x->jobs) {
    exec_free(x);
    return;
  }
  for (job *j = x->jobs; j; j = j->next) {
    if (j->answered)
      continue;
    j->cancelled = 1;
    kill_group(j);
    if (!j->spawned || j->exited)
      answer(j);
  }
}

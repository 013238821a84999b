/*
 * report/report.c: a report page from start to end (include/report/report.h).
 *
 * DESIGN
 * - Chart.js is read from the file system at every page, not compiled in:
 *   the page inlines the library Debian ships and keeps patched
 *   (libjs-chart.js), and its hash in the Content-Security-Policy is
 *   computed from the bytes actually inlined.
 * - The page is written the way the state file is (state/state.c): a new
 *   file beside the old one, fsync, rename. Its temporary name is made by
 *   mkstemp, so `perfship report` and the agent may write the same path at
 *   once: each rename is whole and the later one wins.
 * - Modes are set with fchmod/chmod after creation, because the umask of
 *   the service (UMask=0077) would otherwise make the page unreadable to a
 *   web server, which is the point of writing it.
 */
#include "report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "report/html.h"
#include "report/model.h"
#include "report/query.h"

#define CHART_JS_MAX_BYTES ((size_t)8 << 20)

static int read_chart_js(const char *path, ps_buf *out, ps_buf *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  int rc = fd < 0 ? -errno : ps_read_whole(fd, CHART_JS_MAX_BYTES, out);
  if (fd >= 0)
    close(fd);
  if (rc < 0 && err)
    ps_buf_printf(err, "%s: cannot read Chart.js (%s); install Debian's libjs-chart.js or "
                  "point report.chart_js at chart.min.js", path, strerror(-rc));
  else if (!ps_report_script_ok(out->data, out->len)) {
    rc = -EINVAL;
    if (err)
      ps_buf_printf(err, "%s: holds \"</script\" or \"<!--\", so it cannot be inlined into "
                    "a page; is report.chart_js really Chart.js (chart.min.js)?", path);
  }
  return rc;
}

int ps_report_make(const ps_config *cfg, const ps_report_opts *opts, ps_buf *html,
                   int *errno_out, ps_buf *err) {
  ps_buf lib;
  ps_buf_init(&lib, 0);
  *errno_out = 0;
  int rc = read_chart_js(opts->chart_js, &lib, err);
  if (rc < 0) {
    *errno_out = rc;
    ps_buf_free(&lib);
    return PS_REPORT_CHART_JS;
  }
  ps_report_data d;
  int64_t since = opts->now_ns - opts->since_s * 1000000000;
  ps_report_data_init(&d, opts->now_ns, since, opts->source);
  int result = PS_REPORT_OK;
  if ((opts->source && !d.source) ||
      (opts->last_error && !(d.last_error = strdup(opts->last_error))) ||
      (opts->compare_url && !(d.compare_url = strdup(opts->compare_url))) ||
      ps_report_set_hosts(&d, opts->hosts, opts->nhosts) < 0) {
    result = PS_REPORT_NOMEM;
    goto out;
  }
  rc = ps_report_query(cfg, &d, err);
  if (rc == -ENOMEM) {
    result = PS_REPORT_NOMEM;
    goto out;
  }
  if (rc < 0) {
    *errno_out = rc;
    result = PS_REPORT_SERVER;
    goto out;
  }
  const char *db = cfg->influxdb.api == PS_API_V2 ? cfg->influxdb.bucket : cfg->influxdb.database;
  ps_report_assets a = {lib.data, lib.len, "perfship " PERFSHIP_VERSION, db};
  rc = ps_report_render(&d, &a, html);
  if (rc < 0) {
    *errno_out = rc;
    result = rc == -EINVAL ? PS_REPORT_CHART_JS : PS_REPORT_NOMEM;
    if (err && rc == -EINVAL)
      ps_buf_puts(err, "the page's own script or style cannot be inlined safely (a build "
                       "problem: agent/report/page.js or page.css holds \"</script\" or "
                       "\"<!--\")");
  }
out:
  ps_report_data_free(&d);
  ps_buf_free(&lib);
  return result;
}

/* Creates the missing folders of `dir`, each 0755 whatever the umask. */
static int make_folders(char *dir) {
  struct stat st;
  if (stat(dir, &st) == 0)
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
  if (errno != ENOENT)
    return -errno;
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = '\0';
    int rc = make_folders(dir);
    *slash = '/';
    if (rc < 0)
      return rc;
  }
  if (mkdir(dir, 0755) < 0 && errno != EEXIST)
    return -errno;
  return chmod(dir, 0755) < 0 ? -errno : 0;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -errno;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int ps_report_write_file(const char *path, const char *data, size_t len, ps_buf *err) {
  ps_buf dir, tmp;
  ps_buf_init(&dir, 0);
  ps_buf_init(&tmp, 0);
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  int rc = ps_buf_append(&dir, path, slash ? (size_t)(slash - path) : 0);
  if (!rc && !dir.len)
    rc = ps_buf_puts(&dir, slash ? "/" : ".");
  if (!rc)
    rc = ps_buf_printf(&tmp, "%s/.%s.XXXXXX", dir.data, base);
  const char *step = "cannot create its folder";
  if (!rc && !base[0])
    rc = -EISDIR;
  if (!rc)
    rc = make_folders(dir.data);
  int fd = -1;
  if (!rc) {
    step = "cannot create a file in its folder";
    fd = mkstemp(tmp.data);
    if (fd < 0)
      rc = -errno;
  }
  if (!rc) {
    step = "cannot write it";
    if (fchmod(fd, 0644) < 0)
      rc = -errno;
  }
  if (!rc)
    rc = write_all(fd, data, len);
  if (!rc && fsync(fd) < 0)
    rc = -errno;
  if (fd >= 0 && close(fd) < 0 && !rc)
    rc = -errno;
  if (!rc) {
    step = "cannot replace it";
    if (rename(tmp.data, path) < 0)
      rc = -errno;
  }
  if (!rc) { /* the rename must survive a power cut too */
    int dfd = open(dir.data, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      fsync(dfd);
      close(dfd);
    }
  } else if (fd >= 0) {
    unlink(tmp.data);
  }
  if (rc < 0 && err)
    ps_buf_printf(err, "%s: %s (%s)", path, step, strerror(-rc));
  ps_buf_free(&dir);
  ps_buf_free(&tmp);
  return rc;
}

/*
 * config_secrets.c: the password, the token and the webhook URL, read from
 * the files the configuration names (include/core/config.h). A secret is
 * never printed; its buffers are wiped before they are freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_private.h"
#include "core/util.h"

#define MAX_SECRET_BYTES 4096

/* Frees a buffer that held a secret, zeroed first. */
static void wipe(ps_buf *b) {
  if (b->data)
    explicit_bzero(b->data, b->cap);
  ps_buf_free(b);
}

static int read_secret(const char *key, const char *path, const char *cfgfile,
                       char **out, ps_buf *err) {
  /* Symlinks are followed: mounted secrets (Kubernetes, Docker) are links
   * into a timestamped folder. What is checked below (a regular file, mode
   * without group/other access) is the target, through the open fd. */
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    ps_buf_printf(err, "%s: cannot open the file named by %s in %s: %s; %s",
                  path, key, cfgfile, strerror(e),
                  e == ENOENT ? "create it (mode 600) or fix the path"
                              : "make it readable by the user perfship runs as");
    return -e;
  }
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    ps_buf_printf(err, "%s: %s must name a regular file; fix the path in %s",
                  path, key, cfgfile);
    return -EINVAL;
  }
  if (st.st_mode & 077) {
    close(fd);
    ps_buf_printf(err, "%s: group or others may access this secret (mode %03o); run "
                  "`chmod 600 %s` (named by %s in %s)",
                  path, (unsigned)(st.st_mode & 0777), path, key, cfgfile);
    return -EPERM;
  }
  /* One allocation that is never copied by a realloc (ps_read_whole asks
   * for at most limit + 1 bytes), so wiping it wipes every copy. */
  ps_buf text;
  ps_buf_init(&text, 0);
  int rc = ps_read_whole(fd, MAX_SECRET_BYTES, &text);
  close(fd);
  if (rc == -EFBIG) {
    wipe(&text);
    ps_buf_printf(err, "%s: longer than %d bytes, which is not a password or token; "
                  "check %s in %s", path, MAX_SECRET_BYTES, key, cfgfile);
    return -EFBIG;
  }
  if (rc < 0) {
    wipe(&text);
    ps_buf_printf(err, "%s: cannot read the file named by %s in %s: %s", path,
                  key, cfgfile, strerror(-rc));
    return rc;
  }
  char *buf = text.data;
  size_t got = text.len;
  while (got && (buf[got - 1] == '\n' || buf[got - 1] == '\r'))
    got--;
  if (got == 0 || memchr(buf, '\n', got) || memchr(buf, '\r', got) ||
      memchr(buf, '\0', got)) {
    wipe(&text);
    ps_buf_printf(err, "%s: %s; the file must hold the secret alone on one line "
                  "(%s in %s)", path, got == 0 ? "is empty" : "holds more than one line",
                  key, cfgfile);
    return -EINVAL;
  }
  char *s = malloc(got + 1);
  if (s) {
    memcpy(s, buf, got);
    s[got] = '\0';
  }
  wipe(&text);
  if (!s)
    return -ENOMEM;
  ps_cfg_free_secret(out);
  *out = s;
  return 0;
}

int ps_config_load_secrets(ps_config *c, ps_buf *err) {
  const char *cfgfile = c->file ? c->file : "the built-in defaults";
  int rc;
  if (c->influxdb.password_file && c->influxdb.password_file[0]) {
    rc = read_secret("influxdb.password_file", c->influxdb.password_file, cfgfile,
                     &c->influxdb.password, err);
    if (rc)
      return rc;
  }
  const char *env = getenv("PERFSHIP_TOKEN");
  if (env && env[0]) {
    /* The token becomes an HTTP header line: a control character (the
     * newline of `export PERFSHIP_TOKEN="$(cat file)"`-style mistakes)
     * would end that line and forge others. */
    for (const char *q = env; *q; q++)
      if ((unsigned char)*q < 0x20 || *q == 0x7f) {
        ps_buf_printf(err, "PERFSHIP_TOKEN holds a control character (a line "
                      "break?); set it to the token alone");
        return -EINVAL;
      }
    char *t = strdup(env);
    if (!t)
      return -ENOMEM;
    ps_cfg_free_secret(&c->influxdb.token);
    c->influxdb.token = t;
  } else if (c->influxdb.token_file && c->influxdb.token_file[0]) {
    rc = read_secret("influxdb.token_file", c->influxdb.token_file, cfgfile,
                     &c->influxdb.token, err);
    if (rc)
      return rc;
  }
  return ps_config_load_alert_secrets(c, err);
}

int ps_config_load_alert_secrets(ps_config *c, ps_buf *err) {
  const char *cfgfile = c->file ? c->file : "the built-in defaults";
  const char *path = c->alerts.webhook.url_file;
  if (!c->alerts.webhook.given || !path || !path[0])
    return 0;
  int rc = read_secret("alerts.webhook.url_file", path, cfgfile,
                       &c->alerts.webhook.url_from_file, err);
  if (rc)
    return rc;
  /* The file's content passes the loader's URL check too, without being
   * repeated in the message. */
  const char *u = c->alerts.webhook.url_from_file;
  const char *rest = ps_cfg_after_http_scheme(u);
  if (!rest || !rest[0] || rest[0] == '/') {
    ps_buf_printf(err, "%s: does not hold an http(s) URL (alerts.webhook.url_file in "
                  "%s); write the webhook's URL alone on one line", path, cfgfile);
    ps_cfg_free_secret(&c->alerts.webhook.url_from_file);
    return -EINVAL;
  }
  return 0;
}

const char *ps_config_webhook_url(const ps_config *c) {
  if (!c->alerts.webhook.given)
    return NULL;
  if (c->alerts.webhook.url_file && c->alerts.webhook.url_file[0])
    return c->alerts.webhook.url_from_file;
  return c->alerts.webhook.url && c->alerts.webhook.url[0] ? c->alerts.webhook.url : NULL;
}

/*
 * cmd/check.c: `perfship check`: validate the configuration, then prove the
 * server takes writes.
 *
 * DESIGN: the probe is an empty POST to the write endpoint the sink will use
 * (same URL, precision and auth through ps_influx_write_sync). InfluxDB
 * authenticates, then looks the database up, then parses the body, so an
 * empty body answers exactly "would a write be accepted" without storing
 * anything. Then a read (SHOW MEASUREMENTS LIMIT 1, the cheapest statement
 * that needs READ on the database) the way the agent's readers make it:
 * credentials that can write but not read, or a v2 bucket InfluxQL cannot
 * find, fail here rather than as an empty history. A server without
 * InfluxQL (VictoriaMetrics) passes with a note. Exit 0 only when all of
 * it is fine; 78 for a configuration
 * problem (including the secrets files), 69 when the server is unreachable or
 * refuses. Nothing here ever prints a secret: only where it comes from.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "influx/client.h"
#include "readback/query.h"
#include "influx/endpoint.h"
#include "core/sysexits_ps.h"

static const char *api_name(ps_api api) { return api == PS_API_V2 ? "v2" : "v1"; }

static const char *gzip_name(ps_gzip_mode g) {
  return g == PS_GZIP_ON ? "on" : g == PS_GZIP_OFF ? "off" : "auto";
}

static int nonempty(const char *s) { return s && s[0]; }

static void print_summary(const ps_config *cfg) {
  printf("configuration: %s: ok\n", cfg->file ? cfg->file : "built-in defaults");
  printf("server: %s (api %s)\n", cfg->influxdb.url, api_name(cfg->influxdb.api));
  if (cfg->influxdb.api == PS_API_V2) {
    printf("  org \"%s\", bucket \"%s\"\n", cfg->influxdb.org, cfg->influxdb.bucket);
    if (getenv("PERFSHIP_TOKEN") && getenv("PERFSHIP_TOKEN")[0])
      printf("  token: from PERFSHIP_TOKEN\n");
    else if (nonempty(cfg->influxdb.token_file))
      printf("  token: from %s\n", cfg->influxdb.token_file);
    else
      printf("  token: none\n");
  } else {
    printf("  database \"%s\"", cfg->influxdb.database);
    if (nonempty(cfg->influxdb.retention_policy))
      printf(", retention policy \"%s\"", cfg->influxdb.retention_policy);
    printf(", create_database %s\n", cfg->influxdb.create_database ? "on" : "off");
    if (nonempty(cfg->influxdb.username))
      printf("  user \"%s\", password %s\n", cfg->influxdb.username,
             nonempty(cfg->influxdb.password_file) ? "from password_file" : "empty");
    else
      printf("  no authentication\n");
  }
  printf("  gzip %s, timeout %lld ms%s\n", gzip_name(cfg->influxdb.gzip),
         (long long)cfg->influxdb.timeout_ms,
         cfg->influxdb.tls_verify ? "" : ", TLS verification OFF");
  printf("state_dir: %s", cfg->state_dir);
  struct stat st;
  if (stat(cfg->state_dir, &st) != 0)
    printf(" (does not exist yet; run creates it)");
  else if (!S_ISDIR(st.st_mode))
    printf(" (NOT a directory: run will fail; fix state_dir)");
  else if (access(cfg->state_dir, W_OK) != 0)
    printf(" (not writable by this user)");
  printf("\n");
  int have_host = 0;
  if (cfg->ntags) {
    printf("tags:");
    for (size_t i = 0; i < cfg->ntags; i++) {
      printf(" %s=%s", cfg->tags[i].key, cfg->tags[i].value);
      have_host |= strcmp(cfg->tags[i].key, "host") == 0;
    }
    printf("\n");
  }
  /* what the agent's points will say (pipeline/delivery.h): two machines
   * must not show the same */
  char name[256] = "";
  if (!have_host && gethostname(name, sizeof name - 1) == 0 && name[0])
    printf("host: %s (the machine's name; set tags.host for another)\n", name);
  printf("sources: %zu\n", cfg->nsources);
  for (size_t i = 0; i < cfg->nsources; i++) {
    const ps_source_cfg *s = &cfg->sources[i];
    printf("  %s (%s", s->path, ps_format_name(s->format));
    if (s->format == PS_FMT_JSONL)
      printf(", measurement %s, time_key %s", s->measurement, s->time_key);
    printf(")");
    /* a glob or a path that does not exist yet is fine: results appear later */
    if (!strpbrk(s->path, "*?[") && stat(s->path, &st) != 0)
      printf(" (does not exist yet)");
    printf("\n");
  }
}

/* *db_missing: a v1 database the agent creates at start (create_database),
 * which the read probe then cannot find either. */
static int probe_write(const ps_config *cfg, int *db_missing) {
  long status = 0;
  ps_buf answer, shown;
  ps_buf_init(&answer, 0);
  ps_buf_init(&shown, 0);
  int rc = ps_influx_write_sync(cfg, "", 0, &status, &answer);
  if (answer.data)
    ps_influx_answer_text(cfg, answer.data, answer.len, &shown);
  while (shown.len && (shown.data[shown.len - 1] == '\n'))
    ps_buf_truncate(&shown, shown.len - 1);
  const char *said = shown.data ? shown.data : "";
  const char *endpoint = cfg->influxdb.api == PS_API_V2 ? "/api/v2/write" : "/write";
  int code = PS_EXIT_UNAVAILABLE;
  if (rc < 0) {
    fprintf(stderr, "perfship: write probe: cannot reach %s: %s; is the server "
            "running, and is influxdb.url right?\n", cfg->influxdb.url, said);
  } else if (status >= 200 && status <= 299) {
    if (cfg->influxdb.api == PS_API_V2)
      printf("write probe: %s accepted (HTTP %ld): bucket \"%s\" can be written\n",
             endpoint, status, cfg->influxdb.bucket);
    else
      printf("write probe: %s accepted (HTTP %ld): database \"%s\" exists and the "
             "credentials work\n", endpoint, status, cfg->influxdb.database);
    code = PS_EXIT_OK;
  } else if (status == 404 && cfg->influxdb.api == PS_API_V1) {
    if (cfg->influxdb.create_database) {
      printf("write probe: database \"%s\" not found; `perfship run` creates it at "
             "start (create_database = true; the user needs admin rights for that)\n",
             cfg->influxdb.database);
      *db_missing = 1;
      code = PS_EXIT_OK;
    } else {
      fprintf(stderr, "perfship: write probe: database \"%s\" not found on %s and "
              "create_database is false; create it (CREATE DATABASE \"%s\") or set "
              "influxdb.create_database = true\n", cfg->influxdb.database,
              cfg->influxdb.url, cfg->influxdb.database);
    }
  } else if (status == 404) {
    fprintf(stderr, "perfship: write probe: %s answered HTTP 404 (%s); check "
            "influxdb.org and influxdb.bucket, and that the server has the v2 API "
            "(else set api = \"v1\")\n", cfg->influxdb.url, said);
  } else if (status == 401 || status == 403) {
    /* 401: the credentials are wrong; 403: right, but without the right */
    if (cfg->influxdb.api == PS_API_V2 && status == 401)
      fprintf(stderr, "perfship: write probe: the server refused the token: wrong token "
              "(HTTP 401: %s); check token_file or PERFSHIP_TOKEN\n", said);
    else if (cfg->influxdb.api == PS_API_V2)
      fprintf(stderr, "perfship: write probe: the server refused the token: it lacks the "
              "right to write bucket \"%s\" (HTTP 403: %s); give it write access\n",
              cfg->influxdb.bucket, said);
    else if (nonempty(cfg->influxdb.username) && status == 401)
      fprintf(stderr, "perfship: write probe: the server refused user \"%s\": wrong user "
              "or password (HTTP 401: %s); check influxdb.username and the password in "
              "%s\n", cfg->influxdb.username, said,
              nonempty(cfg->influxdb.password_file) ? cfg->influxdb.password_file
                                                    : "password_file (none is set)");
    else if (nonempty(cfg->influxdb.username))
      fprintf(stderr, "perfship: write probe: the server refused user \"%s\": the user "
              "lacks the right to write database \"%s\" (HTTP 403: %s); GRANT WRITE ON "
              "\"%s\" TO \"%s\" (ALL to read it back too)\n", cfg->influxdb.username,
              cfg->influxdb.database, said, cfg->influxdb.database, cfg->influxdb.username);
    else
      fprintf(stderr, "perfship: write probe: the server requires authentication "
              "(HTTP %ld: %s); set influxdb.username and influxdb.password_file\n",
              status, said);
  } else {
    fprintf(stderr, "perfship: write probe: %s answered HTTP %ld to POST %s (%s); "
            "see the server's log\n", cfg->influxdb.url, status, endpoint, said);
  }
  ps_buf_free(&answer);
  ps_buf_free(&shown);
  return code;
}

/* What the readers need (the verdicts' history, the report, `perfship
 * verdicts`): a write token or user that cannot read passes the write
 * probe, and every read then fails. */
static int probe_read(const ps_config *cfg, int db_missing) {
  const int v2 = cfg->influxdb.api == PS_API_V2;
  const char *what = v2 ? cfg->influxdb.bucket : cfg->influxdb.database;
  if (db_missing) {
    printf("read probe: skipped until the database exists\n");
    return PS_EXIT_OK;
  }
  ps_buf json, err;
  ps_buf_init(&json, 0);
  ps_buf_init(&err, 4096);
  int rc = ps_rb_query(cfg, "SHOW MEASUREMENTS LIMIT 1", &json, &err);
  int code = PS_EXIT_UNAVAILABLE;
  const char *said = err.data ? err.data : strerror(-rc);
  if (rc == 0) {
    printf("read probe: SHOW MEASUREMENTS answered: %s \"%s\" can be read\n",
           v2 ? "bucket" : "database", what);
    code = PS_EXIT_OK;
  } else if (rc == -EOPNOTSUPP) {
    /* VictoriaMetrics: writes work; verdicts judge the runs the agent saw */
    printf("read probe: %s; the agent judges against the runs it saw itself, and "
           "`perfship report` and `perfship verdicts` cannot read this server\n", said);
    code = PS_EXIT_OK;
  } else if (rc == -EACCES) {
    if (v2)
      fprintf(stderr, "perfship: read probe: the token can write but not read bucket "
              "\"%s\" (%s); give it read access to the bucket too: the verdicts' history, "
              "the report and `perfship verdicts` read it back\n", what, said);
    else if (nonempty(cfg->influxdb.username))
      fprintf(stderr, "perfship: read probe: user \"%s\" can write but not read database "
              "\"%s\" (%s); GRANT ALL ON \"%s\" TO \"%s\" (or READ as well as WRITE): "
              "the verdicts' history, the report and `perfship verdicts` read it back\n",
              cfg->influxdb.username, what, said, what, cfg->influxdb.username);
    else
      fprintf(stderr, "perfship: read probe: the server refused the read (%s)\n", said);
  } else {
    fprintf(stderr, "perfship: read probe: %s\n", said);
  }
  ps_buf_free(&json);
  ps_buf_free(&err);
  return code;
}

int ps_cmd_check(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)cfg_given;
  if (argc > 1) {
    fprintf(stderr, "perfship: check takes no arguments (got '%s'); usage: perfship "
            "[-c FILE] check\n", argv[1]);
    return PS_EXIT_USAGE;
  }
  int rc = ps_cmd_load_secrets(cfg);
  if (rc != PS_EXIT_OK)
    return rc;
  print_summary(cfg);
  fflush(stdout);

  ps_buf err;
  ps_buf_init(&err, 4096);
  ps_buf version;
  ps_buf_init(&version, 256);
  rc = ps_influx_ping(cfg, &version, &err);
  if (rc == 0) {
    printf("ping: ok, server version %s\n", version.len ? version.data : "(not given)");
  } else if (cfg->influxdb.api == PS_API_V1 || rc == -EIO) {
    /* v2 servers need not have /ping, but an unreachable one fails either way */
    fprintf(stderr, "perfship: ping: %s\n", err.data ? err.data : "failed");
    ps_buf_free(&version);
    ps_buf_free(&err);
    return PS_EXIT_UNAVAILABLE;
  }
  fflush(stdout);
  ps_buf_free(&version);
  ps_buf_free(&err);
  int db_missing = 0;
  int code = probe_write(cfg, &db_missing);
  if (code == PS_EXIT_OK) {
    fflush(stdout);
    code = probe_read(cfg, db_missing);
  }
  if (code == PS_EXIT_OK)
    printf("check: ok\n");
  return code;
}

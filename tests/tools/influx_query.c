/*
 * influx_query: runs one InfluxQL query through ps_rb_query()
 * (influx/client.h), for tests/integration/test_influx_client.py and for
 * trying the client by hand against a server.
 *
 *   influx_query [options] QUERY
 *   influx_query [options] --where-tag MEASUREMENT KEY VALUE
 *     --url URL --api v1|v2 --db DB --rp RP --bucket BUCKET --user USER
 *     --timeout-ms N   the password comes from PERFSHIP_PASSWORD and the v2
 *                      token from PERFSHIP_TOKEN, never from argv
 *     --where-tag M K V  builds SELECT * FROM "M" WHERE "K" = 'V' with the
 *                      quoting helpers (influx/influxql.h): names taken from
 *                      data, quoted the way callers must quote them
 *
 * Output on stdout: one JSON object {"rc": N, "errno": "ENAME", "err":
 * "...", "ms": N, "query": "...", "answer": <the server's JSON or null>}.
 * Exit 0 whatever the call returned (the test judges rc); 64 for bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "core/config.h"
#include "influx/client.h"
#include "readback/query.h"
#include "influx/influxql.h"

static const char *errno_name(int rc) {
  switch (-rc) {
  case 0: return "";
  case EIO: return "EIO";
  case EACCES: return "EACCES";
  case EPROTO: return "EPROTO";
  case ENOENT: return "ENOENT";
  case EOPNOTSUPP: return "EOPNOTSUPP";
  case E2BIG: return "E2BIG";
  case EINVAL: return "EINVAL";
  case ENOMEM: return "ENOMEM";
  default: return "other";
  }
}

static void set_str(char **field, const char *v) {
  *field = v ? strdup(v) : NULL;
  if (v && !*field)
    exit(70);
}

static void usage(void) {
  fprintf(stderr, "usage: influx_query [--url URL] [--api v1|v2] [--db DB] [--rp RP] "
                  "[--bucket B] [--user U] [--timeout-ms N] "
                  "(QUERY | --where-tag MEASUREMENT KEY VALUE)\n");
  exit(64);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  static ps_config cfg; /* static: its strings stay reachable for leak checkers */
  cfg.influxdb.api = PS_API_V1;
  cfg.influxdb.timeout_ms = 10000;
  cfg.influxdb.tls_verify = 1;
  const char *query = NULL;
  const char *where[3] = {NULL, NULL, NULL};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(a, name) && v && (i++, 1))
    if (OPT("--url"))
      set_str(&cfg.influxdb.url, v);
    else if (OPT("--api"))
      cfg.influxdb.api = !strcmp(v, "v2") ? PS_API_V2 : PS_API_V1;
    else if (OPT("--db"))
      set_str(&cfg.influxdb.database, v);
    else if (OPT("--rp"))
      set_str(&cfg.influxdb.retention_policy, v);
    else if (OPT("--bucket"))
      set_str(&cfg.influxdb.bucket, v);
    else if (OPT("--user"))
      set_str(&cfg.influxdb.username, v);
    else if (OPT("--timeout-ms"))
      cfg.influxdb.timeout_ms = atol(v);
    else if (!strcmp(a, "--where-tag") && i + 3 < argc) {
      where[0] = argv[i + 1];
      where[1] = argv[i + 2];
      where[2] = argv[i + 3];
      i += 3;
    } else if (a[0] == '-' || query)
      usage();
    else
      query = a;
#undef OPT
  }
  if (!query == !where[0])
    usage();
  set_str(&cfg.influxdb.password, getenv("PERFSHIP_PASSWORD"));
  set_str(&cfg.influxdb.token, getenv("PERFSHIP_TOKEN"));
  if (curl_global_init(CURL_GLOBAL_DEFAULT))
    return 70;

  ps_buf q, json, err;
  ps_buf_init(&q, 0);
  ps_buf_init(&json, 0);
  ps_buf_init(&err, 0);
  int rc = 0;
  if (query)
    rc = ps_buf_puts(&q, query);
  else {
    rc = ps_buf_puts(&q, "SELECT * FROM ");
    if (!rc)
      rc = ps_influxql_quote_ident(&q, where[0]);
    if (!rc)
      rc = ps_buf_puts(&q, " WHERE ");
    if (!rc)
      rc = ps_influxql_quote_ident(&q, where[1]);
    if (!rc)
      rc = ps_buf_puts(&q, " = ");
    if (!rc)
      rc = ps_influxql_quote_string(&q, where[2]);
  }
  double t0 = now_ms();
  if (!rc)
    rc = ps_rb_query(&cfg, q.data, &json, &err);
  double ms = now_ms() - t0;

  cJSON *out = cJSON_CreateObject();
  cJSON_AddNumberToObject(out, "rc", rc);
  cJSON_AddStringToObject(out, "errno", errno_name(rc));
  cJSON_AddStringToObject(out, "err", err.data ? err.data : "");
  cJSON_AddNumberToObject(out, "ms", ms);
  cJSON_AddStringToObject(out, "query", q.data ? q.data : "");
  cJSON *answer = rc == 0 ? cJSON_ParseWithLength(json.data, json.len) : NULL;
  cJSON_AddItemToObject(out, "answer", answer ? answer : cJSON_CreateNull());
  char *text = cJSON_PrintUnformatted(out);
  printf("%s\n", text ? text : "{}");
  cJSON_free(text);
  cJSON_Delete(out);
  ps_buf_free(&q);
  ps_buf_free(&json);
  ps_buf_free(&err);
  curl_global_cleanup();
  return 0;
}

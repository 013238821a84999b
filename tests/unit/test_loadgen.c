/*
 * Unit tests of the loadgen parser (agent/formats/loadgen.c): point shapes,
 * field types per docs/schema.md, every format era, rejects, and back-pressure
 * resumption on the real fixture's perf-finish line.
 *
 * Points are captured as text ("measurement|k=v,...|field:type=value,...|t")
 * so a test reads like the line protocol a user would look at.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "formats/format.h"
#include "input/feed_run.h"

#include "capture.h"
#include "aux_tmpdir.h"

/* A run folder in a temp dir holding `text` as perf.jsonl. */
static char *make_run(const char *name, const char *text) {
  char dir[64];
  assert_int_equal(aux_tmpdir_make(dir, sizeof dir, "loadgen"), 0);
  char *path = NULL;
  assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
  assert_int_equal(mkdir(path, 0755), 0);
  char *perf = NULL;
  assert_true(asprintf(&perf, "%s/perf.jsonl", path) > 0);
  FILE *f = fopen(perf, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  free(path);
  return perf;
}

static void rm_run(char *perf) {
  char *slash = strrchr(perf, '/');
  *slash = '\0';
  slash = strrchr(perf, '/');
  *slash = '\0';
  assert_int_equal(aux_tmpdir_remove(perf), 0);
  free(perf);
}

static const ps_format_ops *lg = &ps_format_loadgen;

/* Feeds every line of text through a parser opened on the run's file, with
 * the head the driver reads for it. */
static void feed_all(const char *perf, const char *text, capture *c) {
  ps_parser *p = cap_open(lg, perf, PS_INPUT_LINES);
  ps_emitter em = cap_emitter(c, "perf.jsonl");
  const char *s = text;
  uint64_t line = 0;
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    em.origin.line = ++line;
    assert_int_equal(ps_format_loadgen.line(p, s, n, &em), 0);
    s += n + (nl ? 1 : 0);
  }
  ps_format_loadgen.free(p);
}

/* The facts of perf.jsonl's complete lines up to `end`, as the agent
 * re-derives them after a restart. */
static int scan_facts(const char *perf, uint64_t end, ps_run_facts *f) {
  int fd = open(perf, O_RDONLY);
  assert_true(fd >= 0);
  ps_buf err;
  ps_buf_init(&err, 0);
  int rc = ps_run_scan_facts(lg, NULL, fd, perf, end, 0, f, &err);
  ps_buf_free(&err);
  close(fd);
  return rc;
}

#define START                                                                  \
  "{\"timestamp\":3.5,\"stage\":-1,\"elapsed\":3.5,\"type\":\"perf-start\","   \
  "\"cpuTimeOffset\":0.001,\"timeOrigin\":1647216131.81362}\n"

static void test_input_kind(void **state) {
  (void)state;
  assert_int_equal(ps_format_loadgen.input_kind(NULL, "/r/x-1234567/perf.jsonl"),
                   PS_INPUT_LINES);
  assert_int_equal(ps_format_loadgen.input_kind(NULL, "/r/x/chain-stage-0.slog.gz"),
                   PS_INPUT_IGNORE);
  assert_int_equal(ps_format_loadgen.input_kind(NULL, "/r/x/docker.log"),
                   PS_INPUT_IGNORE);
}

static void test_run_tags(void **state) {
  (void)state;
  ps_run_id id;
  ps_run_id_from_name("/srv/results/daily-perf-9eb37164f6f7/", &id);
  assert_string_equal(id.run, "daily-perf-9eb37164f6f7");
  assert_string_equal(id.test_type, "daily-perf");
  assert_string_equal(id.revision, "9eb37164f6f7");
  ps_run_id_from_name("manual-7102939", &id);
  assert_string_equal(id.revision, "7102939");
  assert_string_equal(id.test_type, "manual");
  ps_run_id_from_name("run-1647216131000", &id); /* all digits: any length */
  assert_string_equal(id.revision, "1647216131000");
  ps_run_id_from_name("manual-abc12", &id); /* 5 hex: no revision */
  assert_string_equal(id.revision, "");
  assert_string_equal(id.test_type, "");
  assert_string_equal(id.run, "manual-abc12");
  ps_run_id_from_name("my results", &id);
  assert_string_equal(id.run, "my results");
  assert_string_equal(id.revision, "");
  ps_run_id_from_name("daily-perf-latest", &id);
  assert_string_equal(id.revision, "");
  /* the same rule for names given by hand (perfship mark --run) */
  assert_string_equal(ps_run_revision("nightly-abc1234"), "abc1234");
  assert_null(ps_run_revision("-abc1234")); /* no test type before the '-' */
  assert_null(ps_run_revision("nightly-smoke"));
  assert_null(ps_run_revision(NULL));
}

static void test_stream_points_and_types(void **state) {
  (void)state;
  const char *text =
      START
      "{\"timestamp\":3.77,\"stage\":-1,\"elapsed\":3.77,\"type\":\"perf-setup-tasks-start\",\"reset\":false,\"withMonitor\":true,\"testnetOrigin\":\"\"}\n"
      "{\"timestamp\":102.079566,\"stage\":0,\"elapsed\":29.170566,\"type\":\"perf-stage-first-block\",\"block\":1}\n"
      "{\"timestamp\":102.1,\"stage\":0,\"elapsed\":29.2,\"type\":\"perf-chain-process-usage\",\"processType\":\"kernel\",\"real\":29.18,\"blockIo\":0,\"childGuest\":0,\"childKernel\":0.03,\"childUser\":0.11,\"guest\":0,\"kernel\":0.34,\"user\":4.58,\"vmData\":824581,\"vmExe\":86000,\"vmHwm\":503027,\"vmLib\":92000,\"vmLocked\":0,\"vmPeak\":11118000,\"vmPinned\":0,\"vmPte\":2776,\"vmRss\":499690,\"vmSize\":10900000,\"vmStack\":132,\"vmSwap\":0,\"rssAnon\":414066,\"rssFile\":85624,\"rssShmem\":0}\n"
      "{\"timestamp\":102.2,\"stage\":0,\"elapsed\":29.3,\"type\":\"perf-chain-process-usage\",\"processType\":\"vat\",\"vatID\":\"v5\",\"name\":\"agoricNames\",\"real\":25.4,\"user\":0.41,\"vmRss\":25990}\n"
      "{\"timestamp\":102.3,\"stage\":0,\"elapsed\":29.4,\"type\":\"perf-chain-process-usage\",\"processType\":\"vat\",\"vatID\":\"v9\",\"real\":2,\"vmRss\":100}\n"
      "{\"timestamp\":77.5,\"stage\":0,\"elapsed\":4.9,\"type\":\"perf-chain-storage-usage\",\"chain\":{\"config/genesis.json\":24,\"data/application.db/000005.ldb\":2100,\"data/application.db/000009.log\":508,\"data/ag-cosmos-chain-state/data.mdb\":9160,\"data/ag-cosmos-chain-state/xs-snapshots/76.gz\":1185}}\n";
  char *perf = make_run("daily-perf-9eb37164f6f7", text);
  capture c = {0};
  feed_all(perf, text, &c);
  assert_int_equal(c.nrejects, 0);
  const char *tags = "run=daily-perf-9eb37164f6f7,stage=-1,test_type=daily-perf";
  (void)tags;
  /* wall time = timeOrigin + timestamp, to the microsecond */
  const char *start = cap_find_text(&c, "loadgen_event", "event=start", NULL);
  assert_non_null(start);
  assert_non_null(strstr(start, "|1647216135313620000"));
  assert_non_null(strstr(start, "revision=9eb37164f6f7,run=daily-perf-9eb37164f6f7,stage=-1,test_type=daily-perf"));
  assert_non_null(strstr(start, "cpuTimeOffset:f=0.001"));
  const char *setup = cap_find_text(&c, "loadgen_event", "event=setup-tasks-start", NULL);
  assert_non_null(setup);
  assert_non_null(strstr(setup, "reset:b=false"));
  assert_non_null(strstr(setup, "withMonitor:b=true"));
  assert_non_null(strstr(setup, "testnetOrigin:s=|"));
  const char *fb = cap_find_text(&c, "loadgen_event", "event=stage-first-block", NULL);
  assert_non_null(strstr(fb, "block:i=1"));
  assert_non_null(strstr(fb, "elapsed:f=29.170566"));
  assert_non_null(strstr(fb, "stage=0"));
  assert_non_null(strstr(fb, "|1647216233893186000"));
  const char *k = cap_find_text(&c, "loadgen_process", "process=kernel", NULL);
  assert_non_null(k);
  assert_non_null(strstr(k, "vmRss:i=499690"));
  assert_non_null(strstr(k, "vmPeak:i=11118000"));
  assert_non_null(strstr(k, "user:f=4.58"));
  assert_non_null(strstr(k, "blockIo:f=0"));  /* CPU time: float even if 0 */
  assert_non_null(strstr(k, "real:f=29.18"));
  assert_null(strstr(k, "processType"));
  assert_null(strstr(k, "elapsed"));
  assert_non_null(cap_find_text(&c, "loadgen_process", "process=v5:agoricNames", NULL));
  /* a vat without a name */
  const char *v9 = cap_find_text(&c, "loadgen_process", "process=v9,", NULL);
  assert_non_null(v9);
  assert_non_null(strstr(v9, "vmRss:i=100"));
  /* storage per area (first two path components) plus total */
  assert_int_equal(cap_count(&c, "loadgen_storage"), 4);
  assert_non_null(cap_find_text(&c, "loadgen_storage", "area=data/application.db,", "kib:i=2608"));
  assert_non_null(cap_find_text(&c, "loadgen_storage", "area=data/ag-cosmos-chain-state,", "kib:i=10345"));
  assert_non_null(cap_find_text(&c, "loadgen_storage", "area=config/genesis.json,", "kib:i=24"));
  assert_non_null(cap_find_text(&c, "loadgen_storage", "area=total,", "kib:i=12977"));
  cap_free(&c);
  rm_run(perf);
}

/* A small perf-finish in the shape of the runner, values chosen to test
 * types: whole numbers that must stay floats, and absent keys. */
#define FINISH_HEAD                                                            \
  "{\"timestamp\":4000.5,\"stage\":2,\"elapsed\":10,\"type\":\"perf-finish\"," \
  "\"stats\":{\"metadata\":{\"profile\":\"local\",\"testnetOrigin\":\"\","     \
  "\"testData\":{\"sdkRevision\":%s,\"sdkCommitTime\":1647206049,"             \
  "\"docker\":true,\"testType\":\"daily-perf\"}},"                             \
  "\"startedAt\":1647216135.581548%s,"                                         \
  "\"totalBlockCount\":3,"                                                     \
  "\"liveBlocksSummary\":{\"blockCount\":3,\"liveMode\":true,"                 \
  "\"startBlockHeight\":1,\"endBlockHeight\":3,\"avgSwingsetTime\":0.2,"       \
  "\"avgSwingsetPercentage\":4,\"p95SwingsetTime\":null},"                     \
  "\"cyclesSummary\":{\"cycleCount\":2,\"cycleSuccessRate\":%s,"               \
  "\"avgBlockCount\":2,\"avgDuration\":20.5,\"p95BlockCount\":null,"           \
  "\"p95Duration\":null},"

#define STAGE1                                                                 \
  "\"1\":{\"stageIndex\":1,\"stageConfig\":{\"chainOnly\":false,"              \
  "\"durationConfig\":720,\"cycleCount\":null,\"loadgenConfig\":{}},"          \
  "\"previousCycleCount\":0,\"blocksSummaries\":{\"all\":{\"blockCount\":2,"   \
  "\"liveMode\":true,\"startBlockHeight\":2,\"endBlockHeight\":3,"             \
  "\"avgSwingsetTime\":0.25,\"avgSwingsetPercentage\":5}%s},"                  \
  "\"cyclesSummaries\":{\"all\":{\"cycleCount\":2,\"cycleSuccessRate\":%s,"    \
  "\"avgBlockCount\":2,\"avgDuration\":20.5%s}},"                              \
  "\"firstBlockHeight\":2,\"lastBlockHeight\":3,"                              \
  "\"startedAt\":1647216513.147985,\"readyAt\":1647216588.721402,%s"           \
  "\"endedAt\":1647217261.924437,"                                             \
  "\"blocks\":{\"2\":{\"blockHeight\":2,\"blockTime\":1647216523,"             \
  "\"liveMode\":true,\"beforeShutdown\":true,\"beginAt\":1647216523.731913,"   \
  "\"endStartAt\":1647216523.747177,\"endFinishAt\":1647216523.750113,"        \
  "\"slogLines\":76,\"deliveries\":4,\"computrons\":392447,\"lag\":0.731913,"  \
  "\"cosmosTime\":0.015264,\"swingsetTime\":1,\"processingTime\":0.0182},"     \
  "\"3\":{\"blockHeight\":3,\"blockTime\":1647216528,\"liveMode\":false,"      \
  "\"beforeShutdown\":false,\"beginAt\":1647216528.1,\"slogLines\":null,"      \
  "\"deliveries\":0,\"computrons\":0,\"lag\":0.1,\"chainBlockDuration\":5,"    \
  "\"swingsetPercentage\":100}},"                                              \
  "\"cycles\":{\"vault/0\":{\"task\":\"vault\",\"seq\":0,\"success\":true,"    \
  "\"startBlockHeight\":2,\"endBlockHeight\":3,\"startedAt\":1647216588.7369058," \
  "\"endedAt\":1647216603.865211,\"blockCount\":1,\"duration\":15},"           \
  "\"amm/0\":{\"task\":\"amm\",\"seq\":0,\"startBlockHeight\":3,"              \
  "\"startedAt\":1647216594.7280836}},"                                        \
  "\"blockCount\":2,\"cycleCount\":2,\"readyDuration\":75.573417,"             \
  "\"duration\":748,\"chainInitDuration\":2.041976}"

#define STAGE0_CHAINONLY                                                       \
  "\"0\":{\"stageIndex\":0,\"stageConfig\":{\"chainOnly\":false,"              \
  "\"durationConfig\":0},\"blocksSummaries\":{},\"cyclesSummaries\":{},"       \
  "\"startedAt\":1647216136,\"chainInitDuration\":24.5,\"blocks\":{},"         \
  "\"cycles\":{},\"blockCount\":0,\"cycleCount\":0},"

static char *make_finish(const char *rev, const char *ended, const char *rate,
                         const char *p95, const char *shutdown,
                         const char *run_tail) {
  char *head = NULL, *stage = NULL, *all = NULL;
  assert_true(asprintf(&head, FINISH_HEAD, rev, ended, rate) > 0);
  assert_true(asprintf(&stage, STAGE1,
                       p95[0] ? ",\"last100\":{\"blockCount\":1,\"p95Lag\":0.5}" : "",
                       rate, p95, shutdown) > 0);
  assert_true(asprintf(&all, "%s\"stages\":{" STAGE0_CHAINONLY "%s},"
                             "\"stageCount\":2%s}}\n",
                       head, stage, run_tail) > 0);
  free(head);
  free(stage);
  return all;
}

static void test_finish_points_and_types(void **state) {
  (void)state;
  char *fin = make_finish(
      "\"9eb37164f\"", ",\"endedAt\":1647219527.068365", "100",
      ",\"p95BlockCount\":6,\"p95Duration\":31.372774",
      "\"shutdownAt\":1647217233.147585,",
      ",\"duration\":3391.486817,\"chainBootstrapDuration\":24.535586,"
      "\"walletDeployDuration\":125.37972,\"loadgenDeployDuration\":121");
  char *text = NULL;
  assert_true(asprintf(&text, START "%s", fin) > 0);
  char *perf = make_run("daily-perf-9eb37164f6f7", text);
  capture c = {0};
  feed_all(perf, text, &c);
  assert_int_equal(c.nrejects, 0);

  /* perf-finish is an event too */
  assert_non_null(cap_find_text(&c, "loadgen_event", "event=finish", "stage=2"));
  /* stages */
  const char *s1 = cap_find_text(&c, "loadgen_stage", "stage=1,t", NULL);
  assert_non_null(s1);
  assert_non_null(strstr(s1, "stageIndex:i=1"));
  assert_non_null(strstr(s1, "blockCount:i=2"));
  assert_non_null(strstr(s1, "previousCycleCount:i=0"));
  assert_non_null(strstr(s1, "duration:f=748"));
  assert_non_null(strstr(s1, "durationConfig:f=720"));
  assert_non_null(strstr(s1, "chainOnly:b=false"));
  assert_non_null(strstr(s1, "loadgen:b=true"));
  assert_null(strstr(s1, "clientInitDuration")); /* absent, not zero */
  assert_non_null(strstr(s1, "|1647216513147985000"));
  const char *s0 = cap_find_text(&c, "loadgen_stage", "stage=0,t", NULL);
  assert_non_null(strstr(s0, "loadgen:b=false")); /* durationConfig 0 */
  /* summaries */
  const char *ball = cap_find_text(&c, "loadgen_stage_blocks", "stage=1,summary=all", NULL);
  assert_non_null(ball);
  assert_non_null(strstr(ball, "blockCount:i=2"));
  assert_non_null(strstr(ball, "startBlockHeight:i=2"));
  assert_non_null(strstr(ball, "avgSwingsetPercentage:f=5"));
  assert_non_null(strstr(ball, "liveMode:b=true"));
  assert_non_null(cap_find_text(&c, "loadgen_stage_blocks", "summary=last100", "p95Lag:f=0.5"));
  const char *call = cap_find_text(&c, "loadgen_stage_cycles", "stage=1,task=all", NULL);
  assert_non_null(strstr(call, "cycleCount:i=2"));
  assert_non_null(strstr(call, "cycleSuccessRate:f=100"));
  assert_non_null(strstr(call, "avgBlockCount:f=2"));
  assert_non_null(strstr(call, "p95BlockCount:f=6"));
  /* blocks */
  assert_int_equal(cap_count(&c, "loadgen_block"), 2);
  const char *b2 = cap_find_text(&c, "loadgen_block", "live=true", NULL);
  assert_non_null(strstr(b2, "blockHeight:i=2"));
  assert_non_null(strstr(b2, "blockTime:i=1647216523"));
  assert_non_null(strstr(b2, "slogLines:i=76"));
  assert_non_null(strstr(b2, "computrons:i=392447"));
  assert_non_null(strstr(b2, "swingsetTime:f=1"));
  assert_non_null(strstr(b2, "beforeShutdown:b=true"));
  assert_null(strstr(b2, "liveMode"));
  assert_non_null(strstr(b2, "|1647216523731913000"));
  const char *b3 = cap_find_text(&c, "loadgen_block", "live=false", NULL);
  assert_null(strstr(b3, "slogLines")); /* null: absent */
  assert_non_null(strstr(b3, "chainBlockDuration:i=5"));
  assert_non_null(strstr(b3, "swingsetPercentage:f=100"));
  /* cycles */
  const char *v0 = cap_find_text(&c, "loadgen_cycle", "task=vault", NULL);
  assert_non_null(strstr(v0, "seq:i=0,success:b=true,finished:b=true,duration:f=15,blockCount:i=1,startBlockHeight:i=2,endBlockHeight:i=3"));
  assert_non_null(strstr(v0, "|1647216588736906000"));
  const char *a0 = cap_find_text(&c, "loadgen_cycle", "task=amm", NULL);
  assert_non_null(strstr(a0, "seq:i=0,finished:b=false,startBlockHeight:i=3|"));
  /* run */
  const char *run = cap_find_text(&c, "loadgen_run", NULL, NULL);
  assert_non_null(run);
  assert_non_null(strstr(run, "profile=local"));
  assert_non_null(strstr(run, "success:b=true"));
  assert_non_null(strstr(run, "duration:f=3391.486817"));
  assert_non_null(strstr(run, "loadgenDeployDuration:f=121"));
  assert_non_null(strstr(run, "totalBlockCount:i=3"));
  assert_non_null(strstr(run, "stageCount:i=2"));
  assert_non_null(strstr(run, "cycleSuccessRate:f=100"));
  assert_non_null(strstr(run, "cycleAvgDuration:f=20.5"));
  assert_non_null(strstr(run, "sdkRevision:s=9eb37164f"));
  assert_non_null(strstr(run, "sdkCommitTime:i=1647206049"));
  assert_non_null(strstr(run, "live_blockCount:i=3"));
  assert_non_null(strstr(run, "live_startBlockHeight:i=1"));
  assert_non_null(strstr(run, "live_avgSwingsetPercentage:f=4"));
  assert_null(strstr(run, "p95SwingsetTime"));
  assert_non_null(strstr(run, "|1647216135581548000"));
  cap_free(&c);
  free(text);
  free(fin);
  rm_run(perf);
}

static void test_rate_is_float_either_way(void **state) {
  (void)state;
  char *fin = make_finish("\"abc\"", "", "97.92", "", "", "");
  char *text = NULL;
  assert_true(asprintf(&text, START "%s", fin) > 0);
  char *perf = make_run("daily-perf-9eb37164f6f7", text);
  capture c = {0};
  feed_all(perf, text, &c);
  const char *run = cap_find_text(&c, "loadgen_run", NULL, NULL);
  assert_non_null(strstr(run, "cycleSuccessRate:f=97.92"));
  const char *call = cap_find_text(&c, "loadgen_stage_cycles", "task=all", NULL);
  assert_non_null(strstr(call, "cycleSuccessRate:f=97.92"));
  cap_free(&c);
  free(text);
  free(fin);
  rm_run(perf);
}

/* Era 2022-01-17..02-02: no p95 in stage summaries; failed: no endedAt or
 * duration, so success false and no duration field; older files without
 * chainBootstrapDuration fall back to stage 0's chainInitDuration. */
static void test_era_no_p95_failed_fallback(void **state) {
  (void)state;
  char *fin = make_finish("\"abc1234\"", "", "100", "", "", "");
  char *text = NULL;
  assert_true(asprintf(&text, START "%s", fin) > 0);
  char *perf = make_run("manual-abc1234", text);
  capture c = {0};
  feed_all(perf, text, &c);
  assert_int_equal(c.nrejects, 0);
  const char *call = cap_find_text(&c, "loadgen_stage_cycles", "task=all", NULL);
  assert_null(strstr(call, "p95"));
  assert_null(cap_find_text(&c, "loadgen_stage_blocks", "summary=last100", NULL));
  const char *run = cap_find_text(&c, "loadgen_run", NULL, NULL);
  assert_non_null(strstr(run, "success:b=false"));
  assert_null(strstr(run, "duration:"));
  assert_non_null(strstr(run, "chainBootstrapDuration:f=24.5"));
  assert_null(strstr(run, "walletDeployDuration"));
  assert_non_null(strstr(run, "revision=abc1234"));
  cap_free(&c);
  free(text);
  free(fin);
  rm_run(perf);
}

/* Era 2022-02-02..02-13 has no shutdownAt; and yargs made an all-digit
 * revision a JSON number, which must land as a string field. */
static void test_era_no_shutdown_numeric_revision(void **state) {
  (void)state;
  char *fin = make_finish("7102939", "", "100", "", "", "");
  assert_null(strstr(fin, "shutdownAt"));
  char *text = NULL;
  assert_true(asprintf(&text, START "%s", fin) > 0);
  char *perf = make_run("manual-7102939", text);
  capture c = {0};
  feed_all(perf, text, &c);
  assert_int_equal(c.nrejects, 0);
  const char *run = cap_find_text(&c, "loadgen_run", NULL, NULL);
  assert_non_null(strstr(run, "sdkRevision:s=7102939,"));
  assert_non_null(cap_find_text(&c, "loadgen_stage", "stage=1,t", NULL));
  cap_free(&c);
  free(text);
  free(fin);
  rm_run(perf);
}

/* 2021: perf-setup-test-* names, no perf-finish; post-2023: no chain
 * monitor records. Only events come out, and nothing is invented. */
static void test_era_2021_and_no_monitor(void **state) {
  (void)state;
  const char *text =
      START
      "{\"timestamp\":3.8,\"stage\":-1,\"elapsed\":3.8,\"type\":\"perf-setup-test-start\"}\n"
      "{\"timestamp\":50,\"stage\":-1,\"elapsed\":50,\"type\":\"perf-setup-test-finish\"}\n"
      "{\"timestamp\":51,\"stage\":0,\"elapsed\":0,\"type\":\"perf-stage-start\"}\n"
      "{\"timestamp\":99,\"stage\":0,\"elapsed\":48,\"type\":\"perf-stage-finish\"}\n";
  char *perf = make_run("daily-perf-0123456789ab", text);
  capture c = {0};
  feed_all(perf, text, &c);
  assert_int_equal(c.nrejects, 0);
  assert_int_equal(c.npoints, 5);
  assert_int_equal(cap_count(&c, "loadgen_event"), 5);
  assert_non_null(cap_find_text(&c, "loadgen_event", "event=setup-test-start", NULL));
  assert_non_null(cap_find_text(&c, "loadgen_event", "event=stage-finish", "|1647216230813620000"));
  ps_run_facts f;
  assert_int_equal(scan_facts(perf, UINT64_MAX, &f), 0);
  assert_false(f.finish_seen);
  assert_true(f.have_origin);
  assert_false(f.origin_from_mtime);
  assert_true(f.have_last_wall);
  assert_true(f.last_wall_s > 1647216230.8 && f.last_wall_s < 1647216230.9);
  cap_free(&c);
  rm_run(perf);
}

/* No timeOrigin: the origin is perf.jsonl's mtime so the first line's wall
 * time is that mtime (docs/schema.md's start-marker fallback). */
static void test_no_time_origin_uses_mtime(void **state) {
  (void)state;
  const char *text =
      "{\"timestamp\":2,\"stage\":-1,\"elapsed\":2,\"type\":\"perf-start\"}\n"
      "{\"timestamp\":12,\"stage\":0,\"elapsed\":0,\"type\":\"perf-stage-start\"}\n";
  char *perf = make_run("odd", text);
  struct timespec ts[2] = {{1600000000, 0}, {1600000000, 250000000}};
  assert_int_equal(utimensat(AT_FDCWD, perf, ts, 0), 0);
  capture c = {0};
  feed_all(perf, text, &c);
  assert_int_equal(c.nrejects, 0);
  const char *s = cap_find_text(&c, "loadgen_event", "event=start", NULL);
  assert_non_null(strstr(s, "|1600000000250000000"));
  assert_non_null(strstr(s, "|event=start,run=odd,stage=-1|")); /* no revision/test_type */
  assert_non_null(cap_find_text(&c, "loadgen_event", "event=stage-start", "|1600000010250000000"));
  cap_free(&c);
  rm_run(perf);
  /* Opened while perf.jsonl had no complete line yet (the agent meeting a
   * new run): line 1 takes the mtime the driver saw then, and without one
   * there is no origin to give. */
  static const int64_t mtimes[] = {1600000000250000000LL, 0};
  for (size_t i = 0; i < 2; i++) {
    ps_input_head head = {.path = "/nonexistent/odd/perf.jsonl", .mtime_ns = mtimes[i]};
    ps_parser *p = NULL;
    assert_int_equal(lg->open(&p, NULL, &head, NULL), 0);
    capture e = {0};
    ps_emitter em = cap_emitter(&e, "perf.jsonl");
    em.origin.line = 1;
    assert_int_equal(lg->line(p, text, strchr(text, '\n') - text, &em), 0);
    if (mtimes[i]) {
      assert_int_equal(e.nrejects, 0);
      assert_non_null(cap_find_text(&e, "loadgen_event", "run=odd", "|1600000000250000000"));
      assert_true(lg->run_facts(p)->origin_from_mtime);
    } else {
      assert_int_equal(e.npoints, 0);
      assert_string_equal(cap_last_reject(&e), "perf-start: no timeOrigin known for this run");
    }
    lg->free(p);
    cap_free(&e);
  }
}

/* The run is named by the folder holding perf.jsonl; "perf.jsonl" given
 * relative is named through the resolved path the driver adds. The folder
 * of any file of a run comes from string work alone. */
static void test_run_identity_and_folder(void **state) {
  (void)state;
  const char *line = START;
  static const struct {
    const char *path, *real_path, *run;
  } cases[] = {
      {"/srv/results/daily-perf-9eb37164f6f7/perf.jsonl", NULL, "run=daily-perf-9eb37164f6f7"},
      {"perf.jsonl", "/srv/results/manual-7102939/perf.jsonl", "run=manual-7102939"},
      {"../perf.jsonl", "/srv/x/nightly-abc1234/perf.jsonl", "run=nightly-abc1234"},
      /* a link named like another run: the name given wins */
      {"/srv/latest-1234567/perf.jsonl", "/srv/x/nightly-abc1234/perf.jsonl", "run=latest-1234567"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ps_input_head head = {.path = cases[i].path, .real_path = cases[i].real_path,
                          .first_line = NULL};
    ps_parser *p = NULL;
    assert_int_equal(lg->open(&p, NULL, &head, NULL), 0);
    capture c = {0};
    ps_emitter em = cap_emitter(&c, "perf.jsonl");
    em.origin.line = 1;
    assert_int_equal(lg->line(p, line, strlen(line) - 1, &em), 0);
    assert_non_null(cap_find_text(&c, "loadgen_event", cases[i].run, NULL));
    lg->free(p);
    cap_free(&c);
  }
  char folder[64];
  assert_int_equal(lg->run_folder("/srv/r/run-1/chain-stage-0.slog.gz", folder, sizeof folder), 1);
  assert_string_equal(folder, "/srv/r/run-1");
  assert_int_equal(lg->run_folder("run-1/exit_code", folder, sizeof folder), 1);
  assert_string_equal(folder, "run-1");
  assert_int_equal(lg->run_folder("perf.jsonl", folder, sizeof folder), 0);
  assert_int_equal(lg->run_folder("/perf.jsonl", folder, sizeof folder), 0);
  assert_int_equal(lg->run_folder("/a/very/long/folder/name/x", folder, 8), 0);
}

static void test_rejects(void **state) {
  (void)state;
  const char *text = START
      "{\"timestamp\":5,\"stage\":0,\"type\":\"perf-stage-start\"\n"
      "[1,2]\n"
      "{\"stage\":0,\"type\":\"perf-stage-start\"}\n"
      "{\"timestamp\":5,\"stage\":0}\n"
      "{\"timestamp\":5,\"type\":\"perf-chain-process-usage\"}\n"
      "{\"timestamp\":5,\"type\":\"perf-chain-storage-usage\",\"chain\":3}\n"
      "{\"timestamp\":5,\"stage\":0,\"elapsed\":1,\"type\":\"perf-stage-start\"}\n";
  char *perf = make_run("daily-perf-9eb37164f6f7", text);
  capture c = {0};
  feed_all(perf, text, &c);
  assert_int_equal(c.nrejects, 6);
  assert_string_equal(cap_last_reject(&c),
                      "perf-chain-storage-usage without a \"chain\" object");
  /* good lines around bad ones still come through */
  assert_int_equal(c.npoints, 2);
  cap_free(&c);
  rm_run(perf);
}

static char *read_last_line(const char *path, size_t *len) {
  size_t n;
  char *all = cap_slurp(path, &n);
  if (n && all[n - 1] == '\n')
    all[--n] = '\0';
  char *last = strrchr(all, '\n');
  char *out = strdup(last ? last + 1 : all);
  *len = strlen(out);
  free(all);
  return out;
}

/* Back-pressure: the emitter refuses every 7th offer; the parser returns
 * -EAGAIN, is called again with the same record, and in the end every
 * point of the real 0.5 MB perf-finish line was accepted exactly once, in
 * the same order as without refusals. */
static void test_eagain_resumes_exactly_once(void **state) {
  (void)state;
  const char *perf =
      PS_TEST_DATA "/loadgen/synth/daily-perf-9eb37164f6f7/perf.jsonl";
  size_t len;
  char *line = read_last_line(perf, &len);
  for (int round = 0; round < 2; round++) {
    capture plain = {0}, refused = {0};
    refused.refuse_every = round == 0 ? 7 : 1000;
    ps_parser *p1 = NULL, *p2 = NULL;
    p1 = cap_open(lg, perf, PS_INPUT_LINES);
    p2 = cap_open(lg, perf, PS_INPUT_LINES);
    ps_emitter e1 = cap_emitter(&plain, "perf.jsonl"), e2 = cap_emitter(&refused, "perf.jsonl");
    assert_int_equal(ps_format_loadgen.line(p1, line, len, &e1), 0);
    int rc, calls = 0;
    while ((rc = ps_format_loadgen.line(p2, line, len, &e2)) == -EAGAIN)
      calls++;
    assert_int_equal(rc, 0);
    assert_true(calls > 0);
    assert_true(plain.npoints > 1000);
    assert_int_equal(plain.npoints, refused.npoints);
    for (size_t i = 0; i < plain.npoints; i++)
      assert_string_equal(plain.points[i].text, refused.points[i].text);
    /* facts were taken once and are the same */
    const ps_run_facts *f1 = lg->run_facts(p1);
    const ps_run_facts *f2 = lg->run_facts(p2);
    assert_true(f2->finish_seen && f2->have_ended_at);
    assert_memory_equal(f1, f2, sizeof *f1);
    ps_format_loadgen.free(p1);
    ps_format_loadgen.free(p2);
    cap_free(&plain);
    cap_free(&refused);
  }
  /* a small record (storage: several points) resumes too */
  const char *st = "{\"timestamp\":5,\"stage\":0,\"elapsed\":1,\"type\":"
                   "\"perf-chain-storage-usage\",\"chain\":{\"a/b/c\":5,"
                   "\"d/e\":6,\"f\":7,\"a/b/d\":1}}";
  capture r = {0};
  r.refuse_every = 2;
  ps_parser *p = cap_open(lg, perf, PS_INPUT_LINES);
  ps_emitter em = cap_emitter(&r, "perf.jsonl");
  int rc;
  while ((rc = ps_format_loadgen.line(p, st, strlen(st), &em)) == -EAGAIN) {
  }
  assert_int_equal(rc, 0);
  assert_int_equal(r.npoints, 4);
  assert_non_null(strstr(r.points[0].text, "area=a/b,") );
  assert_non_null(strstr(r.points[0].text, "kib:i=6"));
  assert_non_null(strstr(r.points[1].text, "area=d/e,"));
  assert_non_null(strstr(r.points[2].text, "area=f,"));
  assert_non_null(strstr(r.points[3].text, "area=total,"));
  assert_non_null(strstr(r.points[3].text, "kib:i=19"));
  /* a driver that hands over another record after -EAGAIN gets all of
   * that record's points: nothing is skipped by mistake */
  capture d = {0};
  d.refuse_every = 3;
  ps_emitter de = cap_emitter(&d, "perf.jsonl");
  assert_int_equal(ps_format_loadgen.line(p, st, strlen(st), &de), -EAGAIN);
  assert_int_equal(d.npoints, 2);
  d.refuse_every = 0;
  const char *ev = "{\"timestamp\":6,\"stage\":0,\"elapsed\":2,\"type\":"
                   "\"perf-stage-ready\"}";
  assert_int_equal(ps_format_loadgen.line(p, ev, strlen(ev), &de), 0);
  assert_int_equal(d.npoints, 3);
  assert_non_null(strstr(d.points[2].text, "event=stage-ready"));
  /* the same for an interrupted perf-finish */
  d.refuse_every = 5;
  d.offered = 0;
  assert_int_equal(ps_format_loadgen.line(p, line, len, &de), -EAGAIN);
  d.refuse_every = 0;
  assert_int_equal(ps_format_loadgen.line(p, ev, strlen(ev), &de), 0);
  assert_non_null(strstr(d.points[d.npoints - 1].text, "event=stage-ready"));
  ps_format_loadgen.free(p);
  cap_free(&r);
  cap_free(&d);
  free(line);
}

/* Facts after a restart: a parser opened mid-file knows the origin from
 * the first line the driver read; scanning re-derives the rest (up to an
 * offset: only the lines before it count); persisted facts round-trip
 * through JSON. */
static void test_facts_restart(void **state) {
  (void)state;
  const char *perf =
      PS_TEST_DATA "/loadgen/synth/daily-perf-ba4674aa5495/perf.jsonl";
  ps_run_facts scanned;
  assert_int_equal(scan_facts(perf, UINT64_MAX, &scanned), 0);
  assert_true(scanned.finish_seen);
  assert_false(scanned.have_ended_at); /* the failed run */
  assert_true(scanned.have_started_at);
  assert_string_equal(scanned.profile, "local");
  ps_run_facts before_finish;
  size_t len;
  char *all = cap_slurp(perf, &len);
  uint64_t end = (uint64_t)(strrchr(all, '\n') - all); /* the last line's '\n' */
  end = (uint64_t)((char *)memrchr(all, '\n', end) - all) + 1; /* where perf-finish starts */
  free(all);
  assert_int_equal(scan_facts(perf, end, &before_finish), 0);
  assert_false(before_finish.finish_seen);
  assert_true(before_finish.have_origin);
  assert_true(before_finish.have_last_wall);
  ps_parser *p = cap_open(lg, perf, PS_INPUT_LINES);
  const ps_run_facts *f = lg->run_facts(p);
  assert_true(f->have_origin);
  assert_true(f->have_first_wall);
  assert_true(f->origin_s == scanned.origin_s);
  ps_buf js;
  ps_buf_init(&js, 0);
  assert_int_equal(ps_run_facts_to_json(&scanned, &js), 0);
  ps_run_facts back;
  assert_int_equal(ps_run_facts_from_json(js.data, &back), 0);
  assert_memory_equal(&back, &scanned, sizeof back);
  lg->set_run_facts(p, &back);
  assert_memory_equal(lg->run_facts(p), &scanned, sizeof back);
  assert_int_equal(ps_run_facts_from_json("[1]", &back), -EINVAL);
  assert_null(lg->run_facts(NULL));
  ps_format_loadgen.free(p);
  ps_format_loadgen.free(NULL);
  ps_buf_free(&js);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_input_kind),
      cmocka_unit_test(test_run_tags),
      cmocka_unit_test(test_stream_points_and_types),
      cmocka_unit_test(test_finish_points_and_types),
      cmocka_unit_test(test_rate_is_float_either_way),
      cmocka_unit_test(test_era_no_p95_failed_fallback),
      cmocka_unit_test(test_era_no_shutdown_numeric_revision),
      cmocka_unit_test(test_era_2021_and_no_monitor),
      cmocka_unit_test(test_no_time_origin_uses_mtime),
      cmocka_unit_test(test_run_identity_and_folder),
      cmocka_unit_test(test_rejects),
      cmocka_unit_test(test_eagain_resumes_exactly_once),
      cmocka_unit_test(test_facts_restart),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

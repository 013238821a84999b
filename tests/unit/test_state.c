/*
 * test_state: the state file round-trips, is replaced atomically, and a
 * corrupt one is reported and treated as empty, never a crash. Run as
 * root on a directory another user owns, it leaves that user files the
 * user can open.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "state/state.h"
#include "state/state.h"

#define AUX_TMPDIR_TAG "state"
#include "aux_tmpdir.h"

static void write_text(const char *name, const char *text) {
  char p[128];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void missing_is_empty(void **st) {
  (void)st;
  char sub[128];
  snprintf(sub, sizeof sub, "%s/none", dir);
  mkdir(sub, 0700);
  ps_state s;
  ps_buf warn;
  ps_buf_init(&warn, 0);
  assert_int_equal(ps_state_load(&s, sub, &warn), 0);
  assert_int_equal(s.existed, 0);
  assert_int_equal(s.nfiles, 0);
  assert_int_equal(warn.len, 0);
  ps_state_free(&s);
  ps_buf_free(&warn);
}

static void round_trip_keeps_64bit_values(void **st) {
  (void)st;
  ps_state s;
  ps_state_init(&s);
  ps_state_file f = {
      .path = "/srv/run 1/perf.jsonl",
      .id = {.dev = 0xfffffffffffffff1ULL,
             .ino = 18446744073709551000ULL,
             .fp_len = 256,
             .fp_hash = 0x8000000000000001ULL,
             .btime_ns = 1700000000123456789LL},
      .offset = 10485761234ULL,
      .line = 77,
  };
  assert_int_equal(ps_state_add(&s, &f), 0);
  ps_state_file d = {
      .path = "/srv/results.json", .has_doc = 1, .doc_hash = 0xdeadbeefcafef00dULL};
  assert_int_equal(ps_state_add(&s, &d), 0);
  ps_state_add_error(&s, "/srv/x.jsonl:3: bad \"quote\"\nnewline");
  s.pending_points = 42;
  assert_int_equal(
      ps_state_set_section(&s, "runs", strdup("{\"daily-perf-1\":{\"first_seen\":1}}")), 0);
  /* stages keep sections of their own; one replaced, one removed, and a
   * section may never shadow the file's own keys */
  assert_int_equal(ps_state_set_section(&s, "alerts", strdup("[1]")), 0);
  assert_int_equal(ps_state_set_section(&s, "alerts", strdup("[{\"id\":\"x\"}]")), 0);
  assert_int_equal(ps_state_set_section(&s, "gone", strdup("{}")), 0);
  assert_int_equal(ps_state_set_section(&s, "gone", NULL), 0);
  char *bad = strdup("[]");
  assert_int_equal(ps_state_set_section(&s, "files", bad), -EINVAL);
  free(bad);
  assert_int_equal(ps_state_save(&s, dir), 0);
  ps_state_free(&s);

  ps_buf warn;
  ps_buf_init(&warn, 0);
  ps_state l;
  assert_int_equal(ps_state_load(&l, dir, &warn), 0);
  assert_int_equal(warn.len, 0);
  assert_int_equal(l.existed, 1);
  assert_int_equal(l.nfiles, 2);
  ps_state_file *g = ps_state_find(&l, 0xfffffffffffffff1ULL, 18446744073709551000ULL);
  assert_non_null(g);
  assert_string_equal(g->path, "/srv/run 1/perf.jsonl");
  assert_true(g->offset == 10485761234ULL);
  assert_true(g->id.fp_hash == 0x8000000000000001ULL);
  assert_int_equal(g->id.fp_len, 256);
  assert_true(g->id.btime_ns == 1700000000123456789LL);
  assert_int_equal(g->line, 77);
  assert_int_equal(g->has_doc, 0);
  assert_int_equal(l.files[1].has_doc, 1);
  assert_true(l.files[1].doc_hash == 0xdeadbeefcafef00dULL);
  assert_int_equal(l.nerrors, 1);
  assert_string_equal(l.errors[0], "/srv/x.jsonl:3: bad \"quote\"\nnewline");
  assert_int_equal(l.pending_points, 42);
  assert_non_null(ps_state_section(&l, "runs"));
  assert_non_null(strstr(ps_state_section(&l, "runs"), "daily-perf-1"));
  assert_string_equal(ps_state_section(&l, "alerts"), "[{\"id\":\"x\"}]");
  assert_null(ps_state_section(&l, "gone"));
  assert_int_equal(l.nsections, 2);
  ps_state_free(&l);
  ps_buf_free(&warn);
  /* No temporary file is left behind. */
  char tmp[128];
  snprintf(tmp, sizeof tmp, "%s/.state.json.tmp", dir);
  assert_int_equal(access(tmp, F_OK), -1);
}

static void corrupt_is_reported_and_empty(void **st) {
  (void)st;
  const char *bad[] = {
      "",
      "{\"version\":1,\"files\":[{\"path\":\"/a\",\"dev\":\"1\"", /* truncated */
      "\x01\x02garbage",
      "{\"version\":99,\"files\":[]}",
      ("{\"version\":1,\"files\":[{\"path\":\"/a\",\"dev\":\"x\",\"ino\":\"1\","
       "\"fp_len\":\"0\",\"fp_hash\":\"0\",\"offset\":\"0\",\"line\":\"1\"}]}"),
      "[1,2,3]",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_text("state.json", bad[i]);
    ps_state s;
    ps_buf warn;
    ps_buf_init(&warn, 0);
    assert_int_equal(ps_state_load(&s, dir, &warn), 0);
    assert_int_equal(s.nfiles, 0);
    assert_non_null(warn.data);
    assert_non_null(strstr(warn.data, "corrupt"));
    assert_non_null(strstr(warn.data, "state.json"));
    assert_non_null(strstr(warn.data, "kept aside as state.json.corrupt"));
    ps_state_free(&s);
    ps_buf_free(&warn);
    /* Kept aside for inspection, an earlier copy never replaced, and the
     * agent may save a fresh one. */
    char aside[128];
    if (i)
      snprintf(aside, sizeof aside, "%s/state.json.corrupt.%zu", dir, i);
    else
      snprintf(aside, sizeof aside, "%s/state.json.corrupt", dir);
    assert_int_equal(access(aside, F_OK), 0);
    char p[128];
    snprintf(p, sizeof p, "%s/state.json", dir);
    assert_int_equal(access(p, F_OK), -1);
  }
  char first[128];
  snprintf(first, sizeof first, "%s/state.json.corrupt", dir);
  FILE *f = fopen(first, "r");
  assert_non_null(f);
  assert_int_equal(fgetc(f), EOF); /* still the first (empty) one */
  fclose(f);
}

/* state.json a directory: said, left alone, and no save can succeed. */
static void directory_in_place_of_the_state(void **st) {
  (void)st;
  char sub[128], p[160];
  snprintf(sub, sizeof sub, "%s/dirstate", dir);
  assert_int_equal(mkdir(sub, 0700), 0);
  snprintf(p, sizeof p, "%s/state.json", sub);
  assert_int_equal(mkdir(p, 0700), 0);
  ps_state s;
  ps_buf warn;
  ps_buf_init(&warn, 0);
  assert_int_equal(ps_state_load(&s, sub, &warn), 0);
  assert_non_null(warn.data);
  assert_non_null(strstr(warn.data, "state.json is a directory"));
  struct stat sb;
  assert_int_equal(stat(p, &sb), 0);
  assert_true(S_ISDIR(sb.st_mode));
  assert_true(ps_state_save(&s, sub) < 0);
  ps_state_free(&s);
  ps_buf_free(&warn);
}

static void save_replaces_atomically(void **st) {
  (void)st;
  ps_state s;
  ps_state_init(&s);
  ps_state_file f = {.path = "/one", .offset = 1};
  ps_state_add(&s, &f);
  assert_int_equal(ps_state_save(&s, dir), 0);
  struct stat a, b;
  char p[128];
  snprintf(p, sizeof p, "%s/state.json", dir);
  assert_int_equal(stat(p, &a), 0);
  s.files[0].offset = 2;
  assert_int_equal(ps_state_save(&s, dir), 0);
  assert_int_equal(stat(p, &b), 0);
  /* A new inode each time: readers see the old or the new file, whole. */
  assert_true(a.st_ino != b.st_ino);
  assert_int_equal(b.st_mode & 0777, 0600);
  ps_state_free(&s);
  /* Saving into a directory that does not exist fails cleanly. */
  ps_state_init(&s);
  assert_true(ps_state_save(&s, "/nonexistent/dir/for/state") < 0);
  ps_state_free(&s);
}

/* `forget` drops files (ps_state_forget) and run folders (cmd/forget.c) by
 * this one rule; they used to disagree about "/". */
static void path_under_rule(void **st) {
  (void)st;
  assert_true(ps_path_under("/r/run-a/perf.jsonl", "/"));
  assert_true(ps_path_under("/r/run-a", "/r/run-a/"));
  assert_true(ps_path_under("/r/run-a/x", "/r/run-a"));
  assert_false(ps_path_under("/r/run-ab", "/r/run-a"));
  assert_false(ps_path_under("/q", "/r"));
}

static void forget_drops_files_and_folders(void **st) {
  (void)st;
  ps_state s;
  ps_state_init(&s);
  const char *paths[] = {"/r/run-a/perf.jsonl", "/r/run-a/sub/x.jsonl",
                         "/r/run-ab/perf.jsonl", "/r/other.jsonl"};
  for (size_t i = 0; i < 4; i++) {
    ps_state_file f = {.path = (char *)paths[i], .id = {.ino = i + 1}};
    ps_state_add(&s, &f);
  }
  assert_int_equal(ps_state_forget(&s, "/r/run-a/"), 2); /* not run-ab */
  assert_int_equal(s.nfiles, 2);
  assert_null(ps_state_find(&s, 0, 1));
  assert_non_null(ps_state_find(&s, 0, 3));
  assert_int_equal(ps_state_forget(&s, "/r/other.jsonl"), 1);
  assert_int_equal(ps_state_forget(&s, "/nothing"), 0);
  assert_int_equal(s.nfiles, 1);
  ps_state_free(&s);
  ps_state_free(NULL);
}

static void errors_keep_the_last_ten(void **st) {
  (void)st;
  ps_state s;
  ps_state_init(&s);
  char m[32];
  for (int i = 0; i < 25; i++) {
    snprintf(m, sizeof m, "e%d", i);
    ps_state_add_error(&s, m);
  }
  assert_int_equal(s.nerrors, PS_STATE_MAX_ERRORS);
  assert_string_equal(s.errors[0], "e15");
  assert_string_equal(s.errors[9], "e24");
  ps_state_free(&s);
}

/* The errors `status` shows: a list of another type, or entries that
 * are not text, were dropped without a word (issue 32). */
static void damaged_errors_are_said(void **st) {
  (void)st;
  static const char *const cases[][2] = {
      {"{\"version\":1,\"files\":[],\"errors\":5}", "'errors' (a number, not a list)"},
      {"{\"version\":1,\"files\":[],\"errors\":{\"a\":\"b\"}}", "'errors' (an object, not a list)"},
      {"{\"version\":1,\"files\":[],\"errors\":[\"kept\",3,null],\"verdicts\":7}",
       "2 entries of 'errors' that are not text, 'verdicts' (a number)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    write_text("state.json", cases[i][0]);
    ps_state s;
    ps_buf warn;
    ps_buf_init(&warn, 0);
    assert_int_equal(ps_state_load(&s, dir, &warn), 0);
    assert_non_null(warn.data);
    if (!strstr(warn.data, cases[i][1]))
      fail_msg("\"%s\" lacks \"%s\"", warn.data, cases[i][1]);
    assert_non_null(strstr(warn.data, "damaged sections ignored"));
    assert_int_equal(s.nerrors, i == 2 ? 1 : 0);
    ps_state_free(&s);
    ps_buf_free(&warn);
  }
}

#define NOBODY 65534

static uid_t owner_of(const char *path) {
  struct stat st;
  assert_int_equal(lstat(path, &st), 0);
  return st.st_uid;
}

/* Whether user NOBODY can take the lock and save the state, as the service
 * would after a root run. */
static int nobody_can_run_on(const char *sd) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
      _exit(2);
    int fd = ps_state_lock(sd, 1);
    if (fd < 0)
      _exit(3);
    ps_state s;
    ps_buf warn;
    ps_buf_init(&warn, 0);
    ps_state_load(&s, sd, &warn);
    int bad = warn.len != 0 || !s.existed || ps_state_save(&s, sd) != 0;
    _exit(bad ? 4 : 0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void root_leaves_files_to_the_directory_owner(void **st) {
  (void)st;
  if (geteuid() != 0)
    skip();
  char sd[128], p[160], victim[160];
  assert_int_equal(chmod(dir, 0711), 0); /* the other user passes through */
  snprintf(sd, sizeof sd, "%s/service", dir);
  assert_int_equal(mkdir(sd, 0700), 0);
  assert_int_equal(chown(sd, NOBODY, NOBODY), 0);

  /* `perfship run` as root: lock, load, save */
  int lock = ps_state_lock(sd, 1);
  assert_true(lock >= 0);
  ps_state s;
  ps_buf warn;
  ps_buf_init(&warn, 0);
  assert_int_equal(ps_state_load(&s, sd, &warn), 0);
  ps_state_file f = {.path = "/r/a.jsonl", .offset = 7, .line = 2};
  assert_int_equal(ps_state_add(&s, &f), 0);
  assert_int_equal(ps_state_save(&s, sd), 0);
  ps_state_free(&s);
  close(lock);
  snprintf(p, sizeof p, "%s/lock", sd);
  assert_int_equal(owner_of(p), NOBODY);
  snprintf(p, sizeof p, "%s/state.json", sd);
  assert_int_equal(owner_of(p), NOBODY);
  assert_true(nobody_can_run_on(sd));

  /* a directory left broken by an older root run is mended by the next */
  assert_int_equal(chown(p, 0, 0), 0);
  assert_false(nobody_can_run_on(sd));
  assert_int_equal(ps_state_load(&s, sd, &warn), 0);
  ps_state_free(&s);
  assert_int_equal(owner_of(p), NOBODY);
  assert_true(nobody_can_run_on(sd));

  /* never through a link the directory's owner planted */
  snprintf(victim, sizeof victim, "%s/victim", dir);
  write_text("victim", "root's own file");
  assert_int_equal(unlink(p), 0);
  assert_int_equal(symlink(victim, p), 0);
  snprintf(p, sizeof p, "%s/lock", sd);
  assert_int_equal(unlink(p), 0);
  assert_int_equal(link(victim, p), 0);
  assert_int_equal(ps_state_load(&s, sd, &warn), 0);
  ps_state_free(&s);
  assert_int_equal(owner_of(victim), 0);
  ps_buf_free(&warn);

  /* a directory root owns keeps root's files */
  snprintf(sd, sizeof sd, "%s/rootdir", dir);
  assert_int_equal(mkdir(sd, 0700), 0);
  ps_state_init(&s);
  assert_int_equal(ps_state_save(&s, sd), 0);
  snprintf(p, sizeof p, "%s/state.json", sd);
  assert_int_equal(owner_of(p), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(missing_is_empty),
      cmocka_unit_test(round_trip_keeps_64bit_values),
      cmocka_unit_test(corrupt_is_reported_and_empty),
      cmocka_unit_test(directory_in_place_of_the_state),
      cmocka_unit_test(save_replaces_atomically),
      cmocka_unit_test(path_under_rule),
      cmocka_unit_test(forget_drops_files_and_folders),
      cmocka_unit_test(errors_keep_the_last_ten),
      cmocka_unit_test(damaged_errors_are_said),
      cmocka_unit_test(root_leaves_files_to_the_directory_owner),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}

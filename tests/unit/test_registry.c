/*
 * Unit tests of the pipeline's file registry (agent/pipeline/registry.c):
 * where a file resumes (saved offset when its identity still matches, 0
 * when it was rewritten, the last newline for start_at=end), lookups by
 * path and identity through renames and index growth, documents keyed by
 * path with their acknowledged hash and backfill rule, and the one-owner
 * free rule (a retired file lives while a batch holds its checkpoints).
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
#include <uv.h>

#include "core/util.h"
#include "formats/format.h"
#include "pipeline/registry.h"

#include "aux_loop.h"
#include "aux_tmpdir.h"

typedef struct fixture {
  char root[64];
  uv_loop_t loop;
  ps_config cfg;
  pl_shared sh;
  pl_gens gens;
  ps_state saved;
  pl_registry reg;
  ps_source_cfg *src;
  const ps_format_ops *ops;
} fixture;

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  assert_non_null(fx);
  assert_int_equal(aux_tmpdir_make(fx->root, sizeof fx->root, "registry"), 0);
  uv_loop_init(&fx->loop);
  ps_config_defaults(&fx->cfg);
  fx->cfg.sources = calloc(1, sizeof *fx->cfg.sources);
  assert_non_null(fx->cfg.sources);
  ps_source_defaults(&fx->cfg.sources[0]);
  fx->cfg.sources[0].format = PS_FMT_JSONL;
  fx->cfg.nsources = 1;
  fx->src = &fx->cfg.sources[0];
  fx->ops = ps_format_ops_get(PS_FMT_JSONL);
  fx->sh.loop = &fx->loop;
  fx->sh.cfg = &fx->cfg;
  pl_gens_init(&fx->gens, &fx->cfg);
  ps_state_init(&fx->saved);
  pl_registry_init(&fx->reg, &fx->sh, &fx->gens, &fx->saved);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture *fx = *state;
  pl_registry_free(&fx->reg);
  ps_state_free(&fx->saved);
  ps_config_free(&fx->cfg);
  aux_loop_close(&fx->loop);
  assert_int_equal(aux_tmpdir_remove(fx->root), 0);
  free(fx);
  return 0;
}

static char *path_of(fixture *fx, const char *name) {
  static char p[128];
  snprintf(p, sizeof p, "%s/%s", fx->root, name);
  return p;
}

static void put(fixture *fx, const char *name, const char *text) {
  FILE *f = fopen(path_of(fx, name), "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* The state a previous agent left for `name`: its identity now, and the
 * offset/line it had acknowledged. */
static void saved_entry(fixture *fx, const char *name, uint64_t offset, uint64_t line) {
  int fd = open(path_of(fx, name), O_RDONLY);
  assert_true(fd >= 0);
  struct stat st;
  assert_int_equal(fstat(fd, &st), 0);
  ps_state_file e;
  memset(&e, 0, sizeof e);
  e.path = path_of(fx, name);
  assert_int_equal(ps_file_identify(fd, &st, &e.id), 0);
  close(fd);
  e.offset = offset;
  e.line = line;
  assert_int_equal(ps_state_add(&fx->saved, &e), 0);
}

static void test_new_file_starts_at_zero(void **state) {
  fixture *fx = *state;
  put(fx, "a.jsonl", "{\"t\":1}\n{\"t\":2}\n");
  pl_file *f = pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "a.jsonl"), 0);
  assert_non_null(f);
  assert_int_equal(ps_tail_offset(&f->tail), 0);
  assert_int_equal(f->cur.committed, 0);
  assert_int_equal(f->kind, PS_INPUT_LINES);
  assert_true(fx->sh.state_dirty);
  assert_string_equal(f->em.origin.file, path_of(fx, "a.jsonl"));
  assert_int_equal(pl_registry_live(&fx->reg), 1);
}

static void test_resumes_at_saved_offset(void **state) {
  fixture *fx = *state;
  put(fx, "a.jsonl", "{\"t\":1}\n{\"t\":2}\n{\"t\":3}\n");
  saved_entry(fx, "a.jsonl", 16, 3);
  pl_file *f = pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "a.jsonl"), 0);
  assert_non_null(f);
  assert_int_equal(ps_tail_offset(&f->tail), 16);
  assert_int_equal(f->cur.committed, 16);
  assert_int_equal(f->cur.committed_line, 3);
  assert_true(fx->saved.files[0].matched); /* claimed: not kept as unseen */
  /* force_offset0 (a restart after truncation) ignores the state */
  pl_registry_retire(&fx->reg, f);
  fx->saved.files[0].matched = 0;
  f = pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "a.jsonl"), 1);
  assert_int_equal(ps_tail_offset(&f->tail), 0);
}

static void test_rewritten_file_starts_over(void **state) {
  fixture *fx = *state;
  put(fx, "a.jsonl", "{\"t\":1}\n{\"t\":2}\n");
  saved_entry(fx, "a.jsonl", 16, 3);
  /* Rewritten in place (same inode): its first bytes differ now. */
  int fd = open(path_of(fx, "a.jsonl"), O_WRONLY);
  assert_int_equal(pwrite(fd, "{\"x\":9}\n", 8, 0), 8);
  close(fd);
  pl_file *f = pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "a.jsonl"), 0);
  assert_non_null(f);
  assert_int_equal(ps_tail_offset(&f->tail), 0);
  /* An offset past the end (truncated) starts over too. */
  put(fx, "b.jsonl", "{\"t\":1}\n");
  saved_entry(fx, "b.jsonl", 400, 20);
  f = pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "b.jsonl"), 0);
  assert_int_equal(ps_tail_offset(&f->tail), 0);
}

static void test_start_at_end_skips_what_exists(void **state) {
  fixture *fx = *state;
  put(fx, "a.jsonl", "{\"t\":1}\n{\"t\":2}\n{\"t\":3");
  fx->sh.first_start_end = 1;
  fx->sh.initial_scan = 1;
  pl_file *f = pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "a.jsonl"), 0);
  assert_int_equal(ps_tail_offset(&f->tail), 16); /* after the last complete line */
  /* a file appearing after the first scan is read whole */
  fx->sh.initial_scan = 0;
  put(fx, "b.jsonl", "{\"t\":1}\n");
  f = pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "b.jsonl"), 0);
  assert_int_equal(ps_tail_offset(&f->tail), 0);
}

static void test_missing_file_is_not_tracked(void **state) {
  fixture *fx = *state;
  assert_null(
      pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "nothing.jsonl"), 0));
  assert_int_equal(mkdir(path_of(fx, "dir.jsonl"), 0755), 0);
  assert_null(pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "dir.jsonl"), 0));
  assert_int_equal(pl_registry_live(&fx->reg), 0);
}

static void test_lookups_survive_renames_and_growth(void **state) {
  fixture *fx = *state;
  enum { N = 300 }; /* several index growths (64 buckets first) */
  pl_file *files[N];
  for (int i = 0; i < N; i++) {
    char name[32];
    snprintf(name, sizeof name, "f%03d.jsonl", i);
    put(fx, name, "{}\n");
    files[i] = pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, name), 0);
    assert_non_null(files[i]);
  }
  for (int i = 0; i < N; i++) {
    char name[32];
    snprintf(name, sizeof name, "f%03d.jsonl", i);
    assert_ptr_equal(pl_registry_find_by_path(&fx->reg, path_of(fx, name), PS_INPUT_LINES),
                     files[i]);
    assert_ptr_equal(pl_registry_find_by_id(&fx->reg, files[i]->id.dev, files[i]->id.ino),
                     files[i]);
    /* the kind is part of the key */
    assert_null(pl_registry_find_by_path(&fx->reg, path_of(fx, name), PS_INPUT_DOCUMENT));
  }
  char moved[128];
  snprintf(moved, sizeof moved, "%s", path_of(fx, "rotated.jsonl.1"));
  assert_int_equal(rename(path_of(fx, "f007.jsonl"), moved), 0);
  pl_registry_moved(&fx->reg, files[7], moved);
  assert_null(pl_registry_find_by_path(&fx->reg, path_of(fx, "f007.jsonl"), PS_INPUT_LINES));
  assert_ptr_equal(pl_registry_find_by_path(&fx->reg, moved, PS_INPUT_LINES), files[7]);
  assert_string_equal(files[7]->path, path_of(fx, "f007.jsonl")); /* origin unchanged */
  /* a draining file is found only by the lookup that asks for it */
  files[8]->draining = 1;
  assert_null(pl_registry_find_by_path(&fx->reg, files[8]->cur_path, PS_INPUT_LINES));
  assert_ptr_equal(pl_registry_find_any_by_path(&fx->reg, files[8]->cur_path, PS_INPUT_LINES),
                   files[8]);
  assert_int_equal(pl_registry_live(&fx->reg), N);
}

static void test_retired_file_lives_while_a_batch_holds_it(void **state) {
  fixture *fx = *state;
  put(fx, "a.jsonl", "{}\n");
  pl_file *f = pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "a.jsonl"), 0);
  uint64_t dev = f->id.dev, ino = f->id.ino;
  f->cur.live = 1; /* a checkpoint held by a batch in flight */
  pl_registry_retire(&fx->reg, f);
  assert_int_equal(f->fd, -1);
  assert_int_equal(pl_registry_live(&fx->reg), 0);
  assert_ptr_equal(fx->reg.files, f); /* still allocated: origins point at it */
  assert_null(pl_registry_find_by_id(&fx->reg, dev, ino));
  f->cur.live = 0; /* the batch was answered */
  pl_registry_maybe_free(&fx->reg, f);
  assert_null(fx->reg.files);
  /* a queued file is not freed under the reader's feet either */
  put(fx, "b.jsonl", "{}\n");
  f = pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "b.jsonl"), 0);
  f->queued = 1;
  pl_registry_retire(&fx->reg, f);
  assert_ptr_equal(fx->reg.files, f);
  f->queued = 0;
  pl_registry_maybe_free(&fx->reg, f);
  assert_null(fx->reg.files);
}

static void test_documents_by_path(void **state) {
  fixture *fx = *state;
  put(fx, "results.json", "{}");
  /* never seen, found at the first scan: its run ended before we looked */
  fx->sh.initial_scan = 1;
  pl_file *f = pl_registry_track_doc(&fx->reg, fx->src, fx->ops, path_of(fx, "results.json"));
  assert_non_null(f);
  assert_int_equal(f->kind, PS_INPUT_DOCUMENT);
  assert_true(f->doc_backfill);
  assert_int_equal(f->cur.committed_doc_hash, 0);
  assert_ptr_equal(pl_registry_find_by_path(&fx->reg, path_of(fx, "results.json"),
                                            PS_INPUT_DOCUMENT),
                   f);
  /* with a saved hash: known contents, not a backfill */
  put(fx, "other.json", "{}");
  ps_state_file e;
  memset(&e, 0, sizeof e);
  e.path = path_of(fx, "other.json");
  e.has_doc = 1;
  e.doc_hash = 0xabcdef;
  assert_int_equal(ps_state_add(&fx->saved, &e), 0);
  f = pl_registry_track_doc(&fx->reg, fx->src, fx->ops, path_of(fx, "other.json"));
  assert_false(f->doc_backfill);
  assert_int_equal(f->cur.committed_doc_hash, 0xabcdef);
  assert_int_equal(f->cur.last_doc_hash, 0xabcdef);
  /* start_at=end: what exists counts as seen (its hash), nothing is sent */
  fx->sh.first_start_end = 1;
  put(fx, "third.json", "{\"a\":1}");
  f = pl_registry_track_doc(&fx->reg, fx->src, fx->ops, path_of(fx, "third.json"));
  assert_int_equal(f->cur.committed_doc_hash, ps_hash64(PS_HASH_SEED, "{\"a\":1}", 7));
  /* a later appearance is a live one */
  fx->sh.initial_scan = 0;
  fx->sh.first_start_end = 0;
  put(fx, "fourth.json", "{}");
  f = pl_registry_track_doc(&fx->reg, fx->src, fx->ops, path_of(fx, "fourth.json"));
  assert_false(f->doc_backfill);
}

static void test_reload_generation_lives_with_its_files(void **state) {
  fixture *fx = *state;
  put(fx, "a.jsonl", "{}\n");
  pl_file *f = pl_registry_track_lines(&fx->reg, fx->src, fx->ops, path_of(fx, "a.jsonl"), 0);
  assert_ptr_equal(f->gen, &fx->gens.boot);
  assert_int_equal(fx->gens.boot.files, 1);
  /* a reload: the new configuration's file reads with its own sources */
  ps_config *n = calloc(1, sizeof *n);
  ps_config_defaults(n);
  n->sources = calloc(1, sizeof *n->sources);
  ps_source_defaults(&n->sources[0]);
  n->nsources = 1;
  assert_int_equal(pl_gens_push(&fx->gens, n), 0);
  put(fx, "b.jsonl", "{}\n");
  pl_file *g = pl_registry_track_lines(&fx->reg, &n->sources[0], fx->ops,
                                       path_of(fx, "b.jsonl"), 0);
  assert_int_equal(fx->gens.head->files, 1);
  pl_registry_retire(&fx->reg, g); /* freed: the current generation stays */
  assert_ptr_equal(pl_gens_current(&fx->gens), n);
  pl_registry_retire(&fx->reg, f);
  assert_int_equal(fx->gens.boot.files, 0);
  pl_gens_free(&fx->gens);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_new_file_starts_at_zero, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resumes_at_saved_offset, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rewritten_file_starts_over, setup, teardown),
      cmocka_unit_test_setup_teardown(test_start_at_end_skips_what_exists, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_file_is_not_tracked, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lookups_survive_renames_and_growth, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_retired_file_lives_while_a_batch_holds_it, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_documents_by_path, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reload_generation_lives_with_its_files, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

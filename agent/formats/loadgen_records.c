/*
 * formats/loadgen_records.c: the records perf.jsonl streams while a run
 * goes on, one point each (agent/formats/loadgen_private.h; docs/loadgen.md,
 * "What is read"): every event as a loadgen_event, the chain
 * monitor's process samples as loadgen_process, its storage sizes as one
 * loadgen_storage per area and their `total`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen_private.h"

static const char *const INT_EVENT[] = {"block", NULL};
static const char *const INT_PROCESS[] = {
    "vmData", "vmExe",  "vmHwm",   "vmLib",   "vmLocked",
    "vmPeak", "vmPinned", "vmPte", "vmRss",   "vmSize",
    "vmStack", "vmSwap", "rssAnon", "rssFile", "rssShmem", NULL};
static const char *const SKIP_ENVELOPE[] = {"timestamp", "stage", "elapsed",
                                            "type", NULL};
static const char *const SKIP_PROCESS[] = {"timestamp", "stage", "elapsed",
                                           "type", "processType", "vatID",
                                           "name", NULL};

void lg_stage_tag(ps_jv stage, char *buf, size_t n) {
  int64_t s;
  buf[0] = '\0';
  if (lg_json_int(stage, &s))
    snprintf(buf, n, "%lld", (long long)s);
}

/* The envelope's `elapsed` first, then every other scalar member (the
 * record's own fields), from the record or from its member table. */
int lg_emit_event(ps_parser *p, ps_emitter *em, ps_jv root, const ps_jtable *tab,
                      ps_jv elapsed, const char *type, const char *stage, int64_t t) {
  lg_pt_reset(p);
  lg_tags_run(p);
  lg_tag_add(p, "stage", stage);
  lg_tag_add(p, "event", strncmp(type, "perf-", 5) == 0 ? type + 5 : type);
  lg_add_float(p, "elapsed", elapsed);
  if (tab)
    lg_add_table_fields(p, tab, INT_EVENT, SKIP_ENVELOPE);
  else
    lg_add_object_fields(p, root, INT_EVENT, SKIP_ENVELOPE, NULL);
  return lg_pt_emit(p, em, "loadgen_event", t);
}

int lg_emit_process(ps_parser *p, ps_emitter *em, ps_jv root,
                        const char *stage, int64_t t) {
  char *proc = p->pt.s->tagbuf[0];
  lg_pt_reset(p);
  const char *ptype = lg_jv_str(p, lg_obj_get(p, root, "processType"));
  const char *vat = lg_jv_str(p, lg_obj_get(p, root, "vatID"));
  const char *name = lg_jv_str(p, lg_obj_get(p, root, "name"));
  if (!ptype || !ptype[0]) {
    ps_emit_reject(em, "perf-chain-process-usage without a processType");
    return 0;
  }
  if (strcmp(ptype, "vat") == 0 && vat && vat[0]) {
    if (name && name[0])
      snprintf(proc, sizeof p->pt.s->tagbuf[0], "%s:%s", vat, name);
    else
      snprintf(proc, sizeof p->pt.s->tagbuf[0], "%s", vat);
  } else {
    snprintf(proc, sizeof p->pt.s->tagbuf[0], "%s", ptype);
  }
  lg_pt_reset(p);
  lg_tags_run(p);
  lg_tag_add(p, "stage", stage);
  lg_tag_add(p, "process", proc);
  lg_add_object_fields(p, root, INT_PROCESS, SKIP_PROCESS, NULL);
  return lg_pt_emit(p, em, "loadgen_process", t);
}

static lg_storage_area *area_get(ps_parser *p, const char *path) {
  char name[256];
  const char *s1 = strchr(path, '/');
  const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
  size_t n = s2 ? (size_t)(s2 - path) : strlen(path);
  if (n == 0 || n >= sizeof name)
    return NULL;
  memcpy(name, path, n);
  name[n] = '\0';
  for (size_t i = 0; i < p->storage.n; i++)
    if (strcmp(p->storage.areas[i].name, name) == 0)
      return &p->storage.areas[i];
  if (p->storage.n == p->storage.cap) {
    size_t cap = p->storage.cap ? p->storage.cap * 2 : 16;
    lg_storage_area *a = realloc(p->storage.areas, cap * sizeof *a);
    if (!a)
      return NULL;
    p->storage.areas = a;
    p->storage.cap = cap;
  }
  lg_storage_area *a = &p->storage.areas[p->storage.n++];
  memcpy(a->name, name, n + 1);
  a->kib = 0;
  return a;
}

int lg_emit_storage(ps_parser *p, ps_emitter *em, ps_jv root,
                        const char *stage, int64_t t) {
  ps_jv chain = lg_obj_get(p, root, "chain");
  if (!lg_is_object(chain)) {
    ps_emit_reject(em, "perf-chain-storage-usage without a \"chain\" object");
    return 0;
  }
  p->storage.n = 0;
  int64_t total = 0;
  int any = 0;
  ps_jiter it = ps_jv_iter_ix(chain, p->rec.ixp);
  ps_jmember m;
  lg_pt_reset(p);
  while (ps_jiter_next(&it, &m)) {
    int64_t kib;
    if (!m.key.p || !lg_json_int(m.val, &kib))
      continue;
    const char *key = lg_key_str(p, m);
    lg_storage_area *a = key ? area_get(p, key) : NULL;
    if (!a)
      continue;
    a->kib += kib;
    total += kib;
    any = 1;
  }
  int rc = 0;
  for (size_t i = 0; i <= p->storage.n && rc == 0; i++) {
    if (i == p->storage.n && !any)
      break;
    lg_pt_reset(p);
    lg_tags_run(p);
    lg_tag_add(p, "stage", stage);
    lg_tag_add(p, "area", i < p->storage.n ? p->storage.areas[i].name : "total");
    ps_field *f = lg_field_new(p, "kib", PS_F_INT);
    f->v.i = i < p->storage.n ? p->storage.areas[i].kib : total;
    rc = lg_pt_emit(p, em, "loadgen_storage", t);
  }
  return rc;
}


void lg_storage_free(lg_storage *st) {
  free(st->areas);
  st->areas = NULL;
  st->n = st->cap = 0;
}

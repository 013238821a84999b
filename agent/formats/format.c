/*
 * formats/format.c: the table of input formats by id (include/formats/format.h).
 *
 * Formats are looked up by id. The tables are weak references so that the
 * registry does not force every format into a program that needs only one
 * (a fuzz target links the library and pulls in just its parser).
 */
#include "formats/format.h"

#include <stddef.h>

extern const ps_format_ops ps_format_jsonl __attribute__((weak));
extern const ps_format_ops ps_format_lp __attribute__((weak));
extern const ps_format_ops ps_format_loadgen __attribute__((weak));
extern const ps_format_ops ps_format_dss_bench __attribute__((weak));
extern const ps_format_ops ps_format_locust __attribute__((weak));
extern const ps_format_ops ps_format_benchmarker __attribute__((weak));

const ps_format_ops *ps_format_ops_get(ps_format_id id) {
  switch (id) {
  case PS_FMT_JSONL:
    return &ps_format_jsonl;
  case PS_FMT_LP:
    return &ps_format_lp;
  case PS_FMT_LOADGEN:
    return &ps_format_loadgen;
  case PS_FMT_DSS_BENCH:
    return &ps_format_dss_bench;
  case PS_FMT_LOCUST:
    return &ps_format_locust;
  case PS_FMT_BENCHMARKER: return &ps_format_benchmarker;
  }
  return NULL;
}

void ps_format_source_rules(ps_format_id id, ps_source_rules *out) {
  const ps_format_ops *ops = ps_format_ops_get(id);
  out->mapping = ops && ops->source_mapping;
  out->has_runs = ops && ops->run_source;
  out->arm = ops && ops->source_arm;
}

/*
 * fuzz_candidate.c: the reading of the server's answers by `perfship
 * verdicts --candidate` (agent/cmd/verdicts_candidate.c).
 *
 * Input: the answer's text (tests/fuzz/corpus/candidate/ holds the shape a
 * 1.x server gives to its GROUP BY "host", "run", "revision", "test_type"
 * query).
 * Properties: any text is read without a crash or a leak, and every run it
 * yields has a name and its own values.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ps_config cfg;
  static int ready;
  if (!ready) {
    ps_config_defaults(&cfg);
    ready = 1;
  }
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  size_t n = 0;
  int rc = ps_cmd_candidate_parse(&cfg.verdicts, text, &n);
  if (rc < 0 && rc != -EPROTO && rc != -ENOMEM)
    abort();
  free(text);
  return 0;
}

/*
 * aux_loop.h: the end of a test's libuv loop. aux_loop_close(loop) runs the
 * loop until nothing is left to do (close callbacks, the threadpool's
 * answers), then closes it and fails the test unless it closes: a handle
 * the code under test left open is a leak the test must report.
 * Header-only; include after <cmocka.h>.
 */
#ifndef PS_TEST_AUX_LOOP_H
#define PS_TEST_AUX_LOOP_H

#include <uv.h>

static inline void aux_loop_close(uv_loop_t *loop) {
  uv_run(loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(loop), 0);
}

#endif

/*
 * alert/channel.c: what channels share (include/alert/channel.h): turning
 * what the other side said into one printable line.
 */
#include "alert/channel.h"

#include <string.h>

void ps_alert_answer_excerpt(char *out, size_t n, const char *s, size_t len) {
  if (!n)
    return;
  size_t k = 0;
  while (len && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')) {
    s++;
    len--;
  }
  for (size_t i = 0; i < len && k + 1 < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\n' || c == '\r')
      break;
    out[k++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
  }
  while (k && out[k - 1] == ' ')
    k--;
  out[k] = '\0';
}

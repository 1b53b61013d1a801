// Small N-API helpers shared by the addon's files.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include "napi_util.h"

#include <stdio.h>
#include <string.h>

napi_value throw_errno(napi_env env, const char *what, int err) {
  char message[256];
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  char code[32];
  snprintf(code, sizeof code, "E%d", err);
  napi_throw_error(env, code, message);
  return NULL;
}

int get_string(napi_env env, napi_value value, char *out, size_t size) {
  size_t length = 0;
  if (napi_get_value_string_utf8(env, value, out, size, &length) != napi_ok) return -1;
  return length > 0 && length < size - 1 ? 0 : -1;
}

napi_value make_uint(napi_env env, double value) {
  napi_value result;
  napi_create_double(env, value, &result);
  return result;
}

void set_property(napi_env env, napi_value object, const char *name, napi_value value) {
  napi_set_named_property(env, object, name, value);
}

napi_value mac_buffer(napi_env env, const unsigned char *mac) {
  napi_value result;
  void *data;
  napi_create_buffer_copy(env, MAC_LENGTH, mac, &data, &result);
  return result;
}

// Small N-API helpers shared by the addon's files.
#ifndef PORTICO_NAPI_UTIL_H
#define PORTICO_NAPI_UTIL_H

#ifndef NAPI_VERSION
#define NAPI_VERSION 8
#endif
#include <node_api.h>
#include <stddef.h>

#define MAC_LENGTH 6

/** Throws a JavaScript Error "what: strerror(err)" with code "E<err>"; returns NULL for the caller to return. */
napi_value throw_errno(napi_env env, const char *what, int err);
/** Copies a non-empty JavaScript string that fits in `size`; -1 otherwise. */
int get_string(napi_env env, napi_value value, char *out, size_t size);
napi_value make_uint(napi_env env, double value);
void set_property(napi_env env, napi_value object, const char *name, napi_value value);
/** A Buffer holding a copy of a 6-byte MAC address. */
napi_value mac_buffer(napi_env env, const unsigned char *mac);

#endif

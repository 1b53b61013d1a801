// interfaces(): the host's network interfaces with index, MAC and flags.
#ifndef PORTICO_INTERFACES_H
#define PORTICO_INTERFACES_H

#ifndef NAPI_VERSION
#define NAPI_VERSION 8
#endif
#include <node_api.h>

napi_value list_interfaces(napi_env env, napi_callback_info info);

#endif

// interfaces(): the host's network interfaces with index, MAC and flags, for choosing where to answer.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include "interfaces.h"

#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "napi_util.h"

// interfaces() -> [{ name, index, mac: Buffer | null, up, loopback, ethernet }]
napi_value list_interfaces(napi_env env, napi_callback_info info) {
  (void)info;
  struct if_nameindex *names = if_nameindex();
  if (names == NULL) return throw_errno(env, "if_nameindex", errno);
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    int err = errno;
    if_freenameindex(names);
    return throw_errno(env, "socket", err);
  }
  napi_value result;
  napi_create_array(env, &result);
  uint32_t count = 0;
  for (struct if_nameindex *entry = names; entry->if_index != 0; entry++) {
    struct ifreq request;
    memset(&request, 0, sizeof request);
    strncpy(request.ifr_name, entry->if_name, IF_NAMESIZE - 1);
    if (ioctl(fd, SIOCGIFFLAGS, &request) < 0) continue;
    short flags = request.ifr_flags;
    if (ioctl(fd, SIOCGIFHWADDR, &request) < 0) continue;
    int ethernet = request.ifr_hwaddr.sa_family == ARPHRD_ETHER;

    napi_value item, name, mac;
    napi_create_object(env, &item);
    napi_create_string_utf8(env, entry->if_name, NAPI_AUTO_LENGTH, &name);
    set_property(env, item, "name", name);
    set_property(env, item, "index", make_uint(env, entry->if_index));
    if (ethernet) {
      mac = mac_buffer(env, (const unsigned char *)request.ifr_hwaddr.sa_data);
    } else {
      napi_get_null(env, &mac);
    }
    set_property(env, item, "mac", mac);
    napi_value up, loopback, is_ethernet;
    napi_get_boolean(env, (flags & IFF_UP) != 0, &up);
    napi_get_boolean(env, (flags & IFF_LOOPBACK) != 0, &loopback);
    napi_get_boolean(env, ethernet, &is_ethernet);
    set_property(env, item, "up", up);
    set_property(env, item, "loopback", loopback);
    set_property(env, item, "ethernet", is_ethernet);
    napi_set_element(env, result, count++, item);
  }
  close(fd);
  if_freenameindex(names);
  return result;
}

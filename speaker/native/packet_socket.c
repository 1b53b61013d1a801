// Linux packet sockets (AF_PACKET) for the speaker: the one thing Node.js cannot do itself. This file only
// opens, binds, configures, sends, receives and closes; every byte received is handed to JavaScript, where
// the pure decoders in speaker/packets decide what it is and whether to answer.
//
// Receiving never blocks the event loop: the socket is non-blocking and watched by a uv_poll_t on Node's
// own loop. Each readiness callback reads at most MAX_BATCH frames and makes one JavaScript call, so a
// flood is served in bounded slices between other work instead of starving timers and I/O; whatever is
// left stays in the kernel's socket buffer (and overflows there, counted in `kernelDrops`).
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "interfaces.h"
#include "napi_util.h"

#define MAX_BATCH 64
#define FRAME_BUFFER 2048

typedef struct {
  uv_poll_t poll;
  int fd;
  int ifindex;
  int closed;     // fd closed and poll stopped (by close() or by the finalizer)
  int finalized;  // the JavaScript handle is gone; the poll's close callback frees the memory
  int poll_closed;
  napi_env env;
  napi_ref callback;
  napi_async_context async_context;
  uint64_t received;
  uint64_t truncated;
  uint64_t vlan_tagged;
  uint64_t kernel_drops;
  uint64_t link_down;
  unsigned char buffer[FRAME_BUFFER];
} packet_socket;

// Accepts ARP (any frame with EtherType 0x0806) and IPv6 ICMPv6 Neighbor Solicitations and Advertisements
// (next header 58 at byte 20, ICMPv6 type 135 or 136 at byte 54); everything else stays in the kernel.
// Advertisements answer the speaker's duplicate address detection (speaker/io/prober.ts). Malformed frames
// that pass are dropped and counted by the decoders, not here.
static struct sock_filter arp_and_ns_filter[] = {
    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0806, 6, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x86dd, 0, 6),
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 20),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 58, 0, 4),
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 54),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 135, 1, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 136, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, 0x40000),
    BPF_STMT(BPF_RET | BPF_K, 0),
};

static void free_socket(packet_socket *s) { free(s); }

static void on_poll_closed(uv_handle_t *handle) {
  packet_socket *s = handle->data;
  s->poll_closed = 1;
  if (s->finalized) free_socket(s);
}

// Stops receiving and closes the descriptor; memory is freed once both the poll handle has closed and
// the JavaScript handle has been collected.
static void shutdown_socket(packet_socket *s) {
  if (s->closed) return;
  s->closed = 1;
  uv_poll_stop(&s->poll);
  uv_close((uv_handle_t *)&s->poll, on_poll_closed);
  close(s->fd);
  s->fd = -1;
  if (s->callback) {
    napi_delete_reference(s->env, s->callback);
    s->callback = NULL;
  }
  if (s->async_context) {
    napi_async_destroy(s->env, s->async_context);
    s->async_context = NULL;
  }
}

static void finalize_socket(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  packet_socket *s = data;
  s->finalized = 1;
  shutdown_socket(s);
  if (s->poll_closed) free_socket(s);
}

static packet_socket *unwrap(napi_env env, napi_value value) {
  void *data = NULL;
  if (napi_get_value_external(env, value, &data) != napi_ok || data == NULL) {
    napi_throw_type_error(env, NULL, "expected a packet socket handle");
    return NULL;
  }
  return data;
}

// Reads one frame; returns its length, 0 when the frame was skipped, -1 when nothing is left (or on error).
static ssize_t read_frame(packet_socket *s) {
  struct sockaddr_ll from;
  char control[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
  struct iovec iov = {.iov_base = s->buffer, .iov_len = sizeof s->buffer};
  struct msghdr msg = {
      .msg_name = &from,
      .msg_namelen = sizeof from,
      .msg_iov = &iov,
      .msg_iovlen = 1,
      .msg_control = control,
      .msg_controllen = sizeof control,
  };
  ssize_t length = recvmsg(s->fd, &msg, MSG_TRUNC | MSG_DONTWAIT);
  if (length < 0) return -1;
  if (from.sll_pkttype == PACKET_OUTGOING) return 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA) continue;
    struct tpacket_auxdata aux;
    memcpy(&aux, CMSG_DATA(c), sizeof aux);
    // The NIC stripped an 802.1Q tag: the frame belongs to a VLAN, which is served through its own
    // VLAN interface; answering here would put the reply on the untagged network.
    if (aux.tp_status & TP_STATUS_VLAN_VALID) {
      s->vlan_tagged++;
      return 0;
    }
  }
  s->received++;
  if ((size_t)length > sizeof s->buffer) {
    s->truncated++;
    length = sizeof s->buffer;
  }
  return length;
}

static void on_readable(uv_poll_t *poll, int status, int events) {
  (void)events;
  packet_socket *s = poll->data;
  if (s->closed) return;
  napi_env env = s->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);

  int error = 0;
  if (status < 0) {
    // libuv reports a pending socket error (POLLERR) as EBADF and stops polling. The error that matters is
    // the socket's own: ENETDOWN when the link went down, after which the socket still works once the link
    // is back, so polling resumes; anything else (the interface is gone) is passed on.
    int socket_error = 0;
    socklen_t size = sizeof socket_error;
    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &socket_error, &size) < 0) socket_error = errno;
    if (socket_error == 0 || socket_error == ENETDOWN) {
      s->link_down++;
      if (uv_poll_start(&s->poll, UV_READABLE, on_readable) != 0) error = EBADF;
    } else {
      error = socket_error;
    }
  }
  napi_value frames;
  napi_create_array(env, &frames);
  uint32_t count = 0;
  for (int i = 0; i < MAX_BATCH && !error; i++) {
    ssize_t length = read_frame(s);
    if (length < 0) {
      // ENETDOWN is reported once when the link goes down; the socket stays bound and receives again
      // when it comes back up, so it is not an error worth closing for.
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ENETDOWN) error = errno;
      break;
    }
    if (length == 0) continue;
    napi_value frame;
    void *data;
    napi_create_buffer_copy(env, (size_t)length, s->buffer, &data, &frame);
    napi_set_element(env, frames, count++, frame);
  }

  if ((count > 0 || error) && s->callback) {
    napi_value callback, global, result;
    napi_value argv[2];
    argv[0] = frames;
    argv[1] = make_uint(env, error);
    napi_get_reference_value(env, s->callback, &callback);
    napi_get_global(env, &global);
    napi_status called = napi_make_callback(env, s->async_context, global, callback, 2, argv, &result);
    if (called == napi_pending_exception) {
      napi_value exception;
      napi_get_and_clear_last_exception(env, &exception);
      napi_fatal_exception(env, exception);
    }
  }
  napi_close_handle_scope(env, scope);
}

// open(interfaceName, onFrames(frames: Buffer[], errno: number)) -> handle
static napi_value open_socket(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char name[IF_NAMESIZE + 1];
  if (argc < 2 || get_string(env, argv[0], name, sizeof name) != 0) {
    napi_throw_type_error(env, NULL, "open(interfaceName, onFrames): bad interface name");
    return NULL;
  }
  napi_valuetype type;
  napi_typeof(env, argv[1], &type);
  if (type != napi_function) {
    napi_throw_type_error(env, NULL, "open(interfaceName, onFrames): onFrames must be a function");
    return NULL;
  }
  unsigned int ifindex = if_nametoindex(name);
  if (ifindex == 0) return throw_errno(env, name, errno);

  // Protocol 0 receives nothing until bind, so no unfiltered frame is queued before the filter is set.
  int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket(AF_PACKET)", errno);
  struct sock_fprog program = {
      .len = sizeof arp_and_ns_filter / sizeof arp_and_ns_filter[0],
      .filter = arp_and_ns_filter,
  };
  int on = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program) < 0 ||
      setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &on, sizeof on) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "setsockopt", err);
  }
#ifdef PACKET_IGNORE_OUTGOING
  // Our own replies would only be read back and ignored; older kernels lack the option, and then
  // read_frame skips them by packet type.
  setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &on, sizeof on);
#endif
  struct sockaddr_ll address = {
      .sll_family = AF_PACKET,
      .sll_protocol = htons(ETH_P_ALL),
      .sll_ifindex = (int)ifindex,
  };
  if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "bind(AF_PACKET)", err);
  }

  packet_socket *s = calloc(1, sizeof *s);
  if (s == NULL) {
    close(fd);
    return throw_errno(env, "calloc", ENOMEM);
  }
  s->fd = fd;
  s->ifindex = (int)ifindex;
  s->env = env;
  s->poll_closed = 1;  // until uv_poll_init succeeds there is nothing to close
  napi_create_reference(env, argv[1], 1, &s->callback);
  napi_value resource_name;
  napi_create_string_utf8(env, "PorticoPacketSocket", NAPI_AUTO_LENGTH, &resource_name);
  napi_async_init(env, NULL, resource_name, &s->async_context);

  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  int err = uv_poll_init(loop, &s->poll, fd);
  if (err == 0) {
    s->poll_closed = 0;
    s->poll.data = s;
    err = uv_poll_start(&s->poll, UV_READABLE, on_readable);
  }
  if (err != 0) {
    napi_delete_reference(env, s->callback);
    napi_async_destroy(env, s->async_context);
    if (!s->poll_closed) {
      s->finalized = 1;
      s->closed = 1;
      uv_close((uv_handle_t *)&s->poll, on_poll_closed);
    } else {
      free(s);
    }
    close(fd);
    napi_throw_error(env, NULL, uv_strerror(err));
    return NULL;
  }

  napi_value handle;
  napi_create_external(env, s, finalize_socket, NULL, &handle);
  return handle;
}

// send(handle, frame) -> 0, or the errno of a failed send (EAGAIN when the socket buffer is full)
static napi_value send_frame(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 2) {
    napi_throw_type_error(env, NULL, "send(handle, frame)");
    return NULL;
  }
  packet_socket *s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  void *data;
  size_t length;
  if (napi_get_buffer_info(env, argv[1], &data, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "send(handle, frame): frame must be a Buffer");
    return NULL;
  }
  if (s->closed) return make_uint(env, EBADF);
  struct sockaddr_ll to = {.sll_family = AF_PACKET, .sll_ifindex = s->ifindex, .sll_halen = MAC_LENGTH};
  if (length >= MAC_LENGTH) memcpy(to.sll_addr, data, MAC_LENGTH);
  ssize_t sent = sendto(s->fd, data, length, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof to);
  return make_uint(env, sent < 0 ? errno : 0);
}

// multicast(handle, mac: Buffer, join: boolean): receive (or stop receiving) frames sent to a multicast
// MAC, e.g. the solicited-node group of an IPv6 address. The kernel counts joins per socket.
static napi_value multicast(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 3) {
    napi_throw_type_error(env, NULL, "multicast(handle, mac, join)");
    return NULL;
  }
  packet_socket *s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  void *mac;
  size_t length;
  bool join;
  if (napi_get_buffer_info(env, argv[1], &mac, &length) != napi_ok || length != MAC_LENGTH ||
      napi_get_value_bool(env, argv[2], &join) != napi_ok) {
    napi_throw_type_error(env, NULL, "multicast(handle, mac, join): mac must be a 6-byte Buffer");
    return NULL;
  }
  if (s->closed) return NULL;
  struct packet_mreq request = {.mr_ifindex = s->ifindex, .mr_type = PACKET_MR_MULTICAST, .mr_alen = 6};
  memcpy(request.mr_address, mac, MAC_LENGTH);
  int option = join ? PACKET_ADD_MEMBERSHIP : PACKET_DROP_MEMBERSHIP;
  if (setsockopt(s->fd, SOL_PACKET, option, &request, sizeof request) < 0)
    return throw_errno(env, join ? "PACKET_ADD_MEMBERSHIP" : "PACKET_DROP_MEMBERSHIP", errno);
  return NULL;
}

// stats(handle) -> { received, truncated, vlanTagged, kernelDrops, linkDown }, totals since open
static napi_value stats(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1) {
    napi_throw_type_error(env, NULL, "stats(handle)");
    return NULL;
  }
  packet_socket *s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  if (!s->closed) {
    // Reading PACKET_STATISTICS resets the kernel's counters, so they are accumulated here.
    struct tpacket_stats kernel;
    socklen_t size = sizeof kernel;
    if (getsockopt(s->fd, SOL_PACKET, PACKET_STATISTICS, &kernel, &size) == 0)
      s->kernel_drops += kernel.tp_drops;
  }
  napi_value result;
  napi_create_object(env, &result);
  set_property(env, result, "received", make_uint(env, (double)s->received));
  set_property(env, result, "truncated", make_uint(env, (double)s->truncated));
  set_property(env, result, "vlanTagged", make_uint(env, (double)s->vlan_tagged));
  set_property(env, result, "kernelDrops", make_uint(env, (double)s->kernel_drops));
  set_property(env, result, "linkDown", make_uint(env, (double)s->link_down));
  return result;
}

static napi_value close_socket(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1) {
    napi_throw_type_error(env, NULL, "close(handle)");
    return NULL;
  }
  packet_socket *s = unwrap(env, argv[0]);
  if (s != NULL) shutdown_socket(s);
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"open", NULL, open_socket, NULL, NULL, NULL, napi_default, NULL},
      {"send", NULL, send_frame, NULL, NULL, NULL, napi_default, NULL},
      {"multicast", NULL, multicast, NULL, NULL, NULL, napi_default, NULL},
      {"stats", NULL, stats, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, close_socket, NULL, NULL, NULL, napi_default, NULL},
      {"interfaces", NULL, list_interfaces, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)

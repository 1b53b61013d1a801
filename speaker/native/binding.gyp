{
  "targets": [
    {
      "target_name": "portico_packet",
      "sources": ["packet_socket.c", "interfaces.c", "napi_util.c"],
      "cflags_c": ["-std=c11", "-Wall", "-Wextra", "-Werror"]
    }
  ]
}

{
  "targets": [
    {
      "target_name": "portico_packet",
      "sources": ["packet_socket.c"],
      "cflags_c": ["-std=c11", "-Wall", "-Wextra", "-Werror"]
    }
  ]
}

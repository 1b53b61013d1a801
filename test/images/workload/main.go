// Command workload is the test cluster's backend: an HTTP server that answers every request with one line of
// JSON naming the pod, its node and the client address it saw, so the tests can tell which pod a load
// balancer reached and whether the client's source address was preserved.
//
// Environment: PORT (default 8080), POD_NAME and NODE_NAME (from the downward API), and DRAIN_SECONDS
// (default 0): on SIGTERM the server keeps answering for that many seconds before it closes, each answer then
// asking the client to close its kept-alive connection, which is what the tests use to observe graceful
// draining. /healthz answers 200 throughout. The same port answers UDP too: each datagram gets the same line
// of JSON back, for the tests of UDP listeners. PROXY_PORT (default 8081) serves
// the same HTTP behind a proxy protocol header (v1 or v2, required): there "client" is the address the header
// carries and "peer" the connection's own, for the tests of load balancers that send the header.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	proxyproto "github.com/pires/go-proxyproto"
)

type answer struct {
	Pod    string `json:"pod"`
	Node   string `json:"node"`
	Client string `json:"client"`
	// Peer is the TCP peer when it differs from Client (behind a proxy protocol header).
	Peer string `json:"peer,omitempty"`
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("workload: ")
	port := envOr("PORT", "8080")
	drain, err := strconv.ParseFloat(envOr("DRAIN_SECONDS", "0"), 64)
	if err != nil || drain < 0 {
		log.Fatalf("DRAIN_SECONDS must be a non-negative number of seconds, not %q", os.Getenv("DRAIN_SECONDS"))
	}
	pod, node := os.Getenv("POD_NAME"), os.Getenv("NODE_NAME")

	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// RemoteAddr is the peer of the TCP connection: the client itself when the load balancer preserves
		// the source address, the node or the balancer when it does not. Encode adds the trailing newline.
		a := answer{Pod: pod, Node: node, Client: r.RemoteAddr}
		if conn, ok := r.Context().Value(peerKey{}).(*proxyproto.Conn); ok {
			a.Peer = conn.Raw().RemoteAddr().String()
		}
		_ = json.NewEncoder(w).Encode(a)
	})

	// ":port" listens on IPv6 and IPv4 alike; Go reports IPv4 peers of the dual-stack socket as a.b.c.d:port.
	listener, err := net.Listen("tcp", ":"+port)
	if err != nil {
		log.Fatalf("cannot listen on port %s: %v", port, err)
	}
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	log.Printf("listening on %s (pod %q, node %q)", listener.Addr(), pod, node)
	go serveUDP(port, pod, node)
	go serveProxied(envOr("PROXY_PORT", "8081"), mux)

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-served:
		log.Fatalf("serving failed: %v", err)
	case sig := <-signals:
		// Answers from now on say `Connection: close`, so a client on a kept-alive connection moves to a new one
		// after its next answer rather than finding the connection closed under a request at the end.
		server.SetKeepAlivesEnabled(false)
		if drain > 0 {
			log.Printf("%v: still serving for %gs before closing", sig, drain)
			// A second signal cuts the drain short, so an impatient kill still ends the process promptly.
			select {
			case <-time.After(time.Duration(drain * float64(time.Second))):
			case <-signals:
			}
		}
	}
	// Shutdown stops listening, closes idle keep-alive connections and waits for requests in flight.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := server.Shutdown(ctx); err != nil {
		log.Printf("closing: %v", err)
	}
	log.Printf("closed")
}

func envOr(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// serveUDP answers each datagram on the port with the JSON line naming the pod, its node and the sender.
func serveUDP(port, pod, node string) {
	conn, err := net.ListenPacket("udp", ":"+port)
	if err != nil {
		log.Fatalf("cannot listen on UDP port %s: %v", port, err)
	}
	buf := make([]byte, 2048)
	for {
		_, from, err := conn.ReadFrom(buf)
		if err != nil {
			log.Printf("UDP: %v", err)
			continue
		}
		line, _ := json.Marshal(answer{Pod: pod, Node: node, Client: from.String()})
		if _, err := conn.WriteTo(append(line, '\n'), from); err != nil {
			log.Printf("UDP answer to %s: %v", from, err)
		}
	}
}

// serveProxied serves the handler behind a required proxy protocol header: a connection without one never reaches
// the handler (the client gets a 400), so a missing header is seen at once. RemoteAddr is the header's source; the
// connection (in the request's context) tells the TCP peer.
func serveProxied(port string, handler http.Handler) {
	inner, err := net.Listen("tcp", ":"+port)
	if err != nil {
		log.Fatalf("cannot listen on port %s: %v", port, err)
	}
	listener := &proxyproto.Listener{
		Listener:          inner,
		ReadHeaderTimeout: 10 * time.Second,
		Policy:            func(net.Addr) (proxyproto.Policy, error) { return proxyproto.REQUIRE, nil },
	}
	server := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext:       func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, peerKey{}, c) },
	}
	log.Fatalf("serving behind the proxy protocol failed: %v", server.Serve(listener))
}

type peerKey struct{}
